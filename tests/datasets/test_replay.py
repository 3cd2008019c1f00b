"""The replay set is a manifest of shared photos (never copies in the project), linked when used."""

from __future__ import annotations

import json
from pathlib import Path

import ci_guard
import pytest

from kosti.datasets import replay

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"


def test_no_photo_is_copied_into_the_project() -> None:
    images = [p for p in replay.REPLAY_DIR.rglob("*") if p.suffix.lower() in {".jpg", ".jpeg", ".png"}]
    assert images == []
    manifest = json.loads(replay.MANIFEST.read_text())
    assert (len(manifest["train"]), len(manifest["reference"])) == (240, 150)
    train = {tuple(r) for r in manifest["train"]}
    assert not train & {tuple(r) for r in manifest["reference"]}  # a reference photo is never replayed
    assert {split for ds, split, _ in manifest["reference"]} == {"test", "val"}  # never a training split


def test_parts_link_the_shared_photos(tmp_path: Path, monkeypatch) -> None:
    if not (SHARED / "byler-d6").is_dir():
        ci_guard.missing(f"{SHARED} is not available (shared data sets)")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("KOSTI_SHARED_DATASETS", str(SHARED))
    folder, split = replay.reference()
    images = sorted((folder / "images").iterdir())
    assert split == "train" and len(images) == 150 and all(p.is_symlink() for p in images)
    assert images[0].name.startswith("byler__") and images[0].resolve().is_relative_to(SHARED.resolve())
    dice = sum(len(f.read_text().split("\n")) - 1 for f in (folder / "labels").iterdir())
    assert dice == 714
    assert replay.reference() == (folder, split)  # linked once, then reused
    assert len(list((replay.replay_train()[0] / "images").iterdir())) == 240
    assert replay.reference_id().startswith("kosti-reference:")


def test_missing_shared_sets_are_one_clear_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("KOSTI_SHARED_DATASETS", str(tmp_path / "nowhere"))
    with pytest.raises(replay.ReplayUnavailable, match="KOSTI_SHARED_DATASETS") as e:
        replay.replay_train()
    assert e.value.exit_code == 2 and "\n" not in str(e.value)
    assert not (tmp_path / "cache").exists()  # nothing half-linked


def test_reference_cache_key_follows_the_readers_default_operating_point(monkeypatch):
    """The cached reference numbers are keyed by the files *and* the reader's default thresholds: an update
    that changes the operating point (v1.1: conf 0.5 → 0.45, the lone-1 rule) measures afresh."""
    import dataclasses

    from kosti.datasets import replay
    from kosti.models import CLASSIFIER_ONNX, DETECTOR_ONNX
    from kosti.vision.params import ReaderParams

    before = replay._files_key(DETECTOR_ONNX, CLASSIFIER_ONNX)
    assert replay._files_key(DETECTOR_ONNX, CLASSIFIER_ONNX) == before  # stable
    names = [f.name for f in dataclasses.fields(ReaderParams)]
    defaults = list(ReaderParams.__init__.__defaults__)
    assert len(defaults) == len(names)  # every setting has its default
    for name, moved in (("conf", 0.3), ("value_conf", 0.2)):  # the detector's and the face reader's thresholds
        changed = list(defaults)
        changed[names.index(name)] = moved
        monkeypatch.setattr(ReaderParams.__init__, "__defaults__", tuple(changed))
        assert getattr(ReaderParams(), name) == moved
        assert replay._files_key(DETECTOR_ONNX, CLASSIFIER_ONNX) != before, name
        monkeypatch.setattr(ReaderParams.__init__, "__defaults__", tuple(defaults))
    assert replay._files_key(DETECTOR_ONNX, CLASSIFIER_ONNX) == before


def test_reference_metrics_key_follows_the_default_zoom(monkeypatch):
    """The reader's zoom defaults live in kosti.models (``DiceReader``'s ``None``): changing them measures afresh."""
    import kosti.models
    from kosti.datasets import replay
    from kosti.models import CLASSIFIER_ONNX, DETECTOR_ONNX

    before = replay._files_key(DETECTOR_ONNX, CLASSIFIER_ONNX)
    monkeypatch.setattr(kosti.models, "DEFAULT_ZOOM_BELOW", 0.0)
    assert replay._files_key(DETECTOR_ONNX, CLASSIFIER_ONNX) != before
