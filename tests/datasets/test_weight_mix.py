"""Mixing a fine-tuned classifier with its base (:mod:`kosti.datasets.weight_mix`, issue 41): the shipped
classifier's real checkpoint, mixed with a changed copy of itself."""

from __future__ import annotations

from pathlib import Path

import ci_guard
import pytest

ci_guard.need_module("torch", "the train extra (scripts/test installs it)")

import torch  # noqa: E402

from kosti.datasets.weight_mix import mix_weights, share_tolerance  # noqa: E402
from kosti.models import MODELS_DIR  # noqa: E402

BASE = MODELS_DIR / "dice_cls.pt"


def _model(pt: Path):
    ck = torch.load(pt, map_location="cpu", weights_only=False)
    return ck.get("ema") or ck["model"]


@pytest.fixture
def tuned(tmp_path: Path) -> Path:
    """The shipped classifier with every float tensor shifted by +1 (a stand-in for a fine-tune)."""
    ck = torch.load(BASE, map_location="cpu", weights_only=False)
    m = ck.get("ema") or ck["model"]
    m.load_state_dict({k: v + 1 if v.is_floating_point() else v for k, v in m.state_dict().items()})
    ck["model"], ck["ema"] = m, None
    out = tmp_path / "tuned.pt"
    torch.save(ck, out)
    return out


def test_a_share_weighs_the_tuned_tensors_and_the_rest_is_the_base(tuned: Path, tmp_path: Path) -> None:
    base_sd = _model(BASE).state_dict()
    name = next(k for k, v in base_sd.items() if v.is_floating_point() and v.numel() > 100)
    for share in (0.0, 0.7, 1.0):
        mixed = _model(mix_weights(BASE, tuned, share, tmp_path / f"m{share}.pt")).state_dict()
        want = base_sd[name].float() + share  # tuned = base + 1
        assert torch.allclose(mixed[name].float(), want, atol=2e-3), share  # float16 storage
        ints = [k for k, v in base_sd.items() if not v.is_floating_point()]
        assert all(torch.equal(mixed[k], base_sd[k]) for k in ints)  # counters are not averaged
    assert _model(tmp_path / "m0.7.pt").names == _model(BASE).names


def test_a_share_outside_0_1_or_another_network_is_refused(tuned: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="share"):
        mix_weights(BASE, tuned, 1.5, tmp_path / "x.pt")
    ck = torch.load(tuned, map_location="cpu", weights_only=False)
    ck["model"].names = {0: "a", 1: "b"}
    other = tmp_path / "other.pt"
    torch.save(ck, other)
    with pytest.raises(ValueError, match="different classes"):
        mix_weights(BASE, other, 0.5, tmp_path / "y.pt")
    assert not (tmp_path / "x.pt").exists() and not (tmp_path / "y.pt").exists()


def test_the_share_tolerance_is_one_crop_on_a_small_set_and_0_002_on_a_large_one() -> None:
    """20 teach throws give ~70 crops: a mix one crop short of the fine-tune (69 of 70) reads them as well;
    two crops short does not. On the proofs' 560 crops one crop is less than 0.002, which stays."""
    tol = share_tolerance(70)
    assert 69 / 70 >= 1.0 - tol - 1e-9 and 68 / 70 < 1.0 - tol - 1e-9
    assert share_tolerance(560) == 0.002 and share_tolerance(500) == 0.002
    assert share_tolerance(1) == 1.0
    with pytest.raises(ValueError, match="no validation crops"):
        share_tolerance(0)
