"""NCNN export for the Raspberry Pi: the shipped weights export offline and read like the ONNX models."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import ci_guard
import numpy as np
import pytest

ci_guard.need_module("ultralytics", "the train extra (scripts/test installs it)")
ci_guard.need_module("pnnx", "the train extra (scripts/test installs it)")

from reader_models import BYLER, require_dataset, shipped_float_models  # noqa: E402

from kosti.cli import main  # noqa: E402
from kosti.models import MODELS_DIR  # noqa: E402
from kosti.vision.onnx_backend import ModelLoadError  # noqa: E402


@pytest.mark.slow
def test_shipped_models_export_to_ncnn_and_read_the_same(tmp_path, capsys):
    """``kosti export --format ncnn`` of the shipped ``.pt``: one JSON document on stdout, folders the lean
    ncnn backend reads with the ONNX reader's results (the step that refreshes ``models/*_ncnn_model``)."""
    photo = require_dataset(BYLER) / "images" / "test" / "IMG_20191209_100002.jpg"
    folders = {}
    for role in ("det", "cls"):
        pt = tmp_path / f"dice_{role}.pt"
        shutil.copy2(MODELS_DIR / f"dice_{role}.pt", pt)
        assert main(["export", "--format", "ncnn", "--json", str(pt)]) == 0
        doc = json.loads(capsys.readouterr().out)
        out = Path(doc["output"])
        assert out == tmp_path / f"dice_{role}_ncnn_model"
        assert sorted(p.name for p in out.iterdir()) == ["metadata.yaml", "model.ncnn.bin", "model.ncnn.param"]
        assert (out / "model.ncnn.bin").stat().st_size > 100_000
        folders[role] = out
    assert "outputs: head_maps" in (folders["det"] / "metadata.yaml").read_text()

    from kosti.vision.reader import DiceReader

    floats = shipped_float_models()  # the same weights unquantised: the shipped ONNX files are INT8
    onnx = DiceReader(floats["det_onnx"], floats["cls_onnx"]).read_path(photo)
    ncnn = DiceReader(det_path=folders["det"], cls_path=folders["cls"], backend="ncnn").read_path(photo)
    assert len(onnx) == len(ncnn) >= 4
    # Same dice (boxes within 2 px after sorting by position) and the same faces.
    a, b = np.lexsort(onnx.xyxy[:, :2].T), np.lexsort(ncnn.xyxy[:, :2].T)
    assert np.abs(onnx.xyxy[a] - ncnn.xyxy[b]).max() <= 2.0
    assert list(onnx.value[a]) == list(ncnn.value[b])
    # Ultralytics cannot run the head-map export: a one-line error, not wrong boxes.
    with pytest.raises(ModelLoadError, match="use --backend ncnn"):
        DiceReader(det_path=folders["det"], cls_path=folders["cls"], backend="ultralytics")


@pytest.mark.slow
def test_ultralytics_own_ncnn_export_reads_at_its_square_size(tmp_path):
    """A detector folder from Ultralytics' own NCNN export (one decoded output, reshapes fixed at 640×640) is
    read by the lean backend at its square size, with the ONNX reader's dice on a square photo."""
    from kosti.common.ultralytics_env import import_ultralytics, stdout_to_stderr
    from kosti.vision.ncnn_backend import NcnnDetector
    from kosti.vision.reader import DiceReader

    photo = require_dataset(BYLER) / "images" / "test" / "IMG_20191209_100002.jpg"
    pt = tmp_path / "dice_det.pt"
    shutil.copy2(MODELS_DIR / "dice_det.pt", pt)
    with stdout_to_stderr():
        out = Path(import_ultralytics().YOLO(str(pt)).export(format="ncnn", imgsz=640, device="cpu", half=True))
    det = NcnnDetector(out)
    assert det.head_maps is None and not det.info.dynamic_hw
    floats = shipped_float_models()  # the same weights unquantised: the shipped ONNX files are INT8
    onnx = DiceReader(floats["det_onnx"], floats["cls_onnx"]).read_path(photo)
    ncnn = DiceReader(det_path=out, backend="ncnn").read_path(photo)
    assert len(onnx) == len(ncnn) >= 4
    a, b = np.lexsort(onnx.xyxy[:, :2].T), np.lexsort(ncnn.xyxy[:, :2].T)
    assert np.abs(onnx.xyxy[a] - ncnn.xyxy[b]).max() <= 2.0
