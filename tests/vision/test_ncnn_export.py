"""NCNN export for the Raspberry Pi: the shipped weights export offline and read like the ONNX models."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ultralytics")
pytest.importorskip("ncnn")
pytest.importorskip("pnnx")

from reader_models import BYLER, require_dataset  # noqa: E402

from kosti.cli import main  # noqa: E402
from kosti.models import MODELS_DIR  # noqa: E402


@pytest.mark.slow
def test_shipped_models_export_to_ncnn_and_read_the_same(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("YOLO_OFFLINE", "1")
    photo = require_dataset(BYLER) / "images" / "test" / "IMG_20191209_100002.jpg"
    folders = {}
    for role in ("det", "cls"):
        pt = tmp_path / f"dice_{role}.pt"
        shutil.copy2(MODELS_DIR / f"dice_{role}.pt", pt)
        assert main(["export", "--format", "ncnn", "--json", str(pt)]) == 0
        doc = json.loads(capsys.readouterr().out)
        out = Path(next(v for v in doc.values() if isinstance(v, str) and v.endswith("_ncnn_model")))
        assert (out / "model.ncnn.param").is_file() and (out / "model.ncnn.bin").stat().st_size > 100_000
        folders[role] = out

    from kosti.vision.reader import DiceReader

    onnx = DiceReader().read_path(photo)
    ncnn = DiceReader(det_path=folders["det"], cls_path=folders["cls"], backend="ultralytics").read_path(photo)
    assert len(onnx) == len(ncnn) >= 4
    # Same dice (boxes within 2 px after sorting by position) and the same faces.
    a, b = np.lexsort(onnx.xyxy[:, :2].T), np.lexsort(ncnn.xyxy[:, :2].T)
    assert np.abs(onnx.xyxy[a] - ncnn.xyxy[b]).max() <= 2.0
    assert list(onnx.value[a]) == list(ncnn.value[b])
