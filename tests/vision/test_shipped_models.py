"""The shipped reader as a package: its files, their size budget and the operating point beside them."""

from __future__ import annotations

import json

import pytest

import kosti.models as shipped

#: The project's budget for all shipped weights together (the brief: ≤ 20 MB).
MAX_WEIGHTS_BYTES = 20_000_000


def test_shipped_weights_fit_the_20_mb_budget():
    files = [p for p in shipped.MODELS_DIR.iterdir() if p.suffix in (".onnx", ".pt")]
    assert {p.name for p in files} >= {"dice_det.onnx", "dice_cls.onnx"}
    total = sum(p.stat().st_size for p in files)
    assert total <= MAX_WEIGHTS_BYTES, f"{total / 1e6:.1f} MB of weights: {sorted(p.name for p in files)}"


def test_operating_point_is_valid_and_used_by_default():
    """The defaults are thresholds in range, and a default DiceReader runs at exactly them (with the
    temperature written in models/reader.json, when there is one)."""
    from kosti.vision.reader import DiceReader

    assert 0 < shipped.DEFAULT_CONF < 1 and 0 < shipped.DEFAULT_IOU <= 1 and 0 <= shipped.DEFAULT_VALUE_CONF <= 1
    reader = DiceReader()
    assert (reader.conf, reader.detector.iou, reader.value_conf) == (
        shipped.DEFAULT_CONF, shipped.DEFAULT_IOU, shipped.DEFAULT_VALUE_CONF)
    assert 0 <= shipped.DEFAULT_VERIFY_CONF <= shipped.DEFAULT_CONF and 0 < shipped.DEFAULT_VERIFY_PROB <= 1
    assert (reader.verify_conf, reader.verify_prob) == (shipped.DEFAULT_VERIFY_CONF, shipped.DEFAULT_VERIFY_PROB)
    settings = shipped.MODELS_DIR / "reader.json"
    if settings.is_file():
        t = json.loads(settings.read_text())["temperature"]
        assert reader.temperature == pytest.approx(t) and 0.1 < t < 10
