"""The lean NCNN backend (``ncnn`` package alone): same results as the ONNX reader, never torch/Ultralytics.

The NCNN folders hold the shipped INT8 files' own weights, dequantized (float16; issue 44,
:mod:`kosti.datasets.ncnn_weights`); the INT8 files also round activations to 8 bits, NCNN does not. Decoding and
reading are compared with the INT8 files computing on float activations
(:func:`reader_models.shipped_int8_float_activations`), so a difference is the NCNN path's own, not 8-bit rounding.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from lean_guard import run_lean  # noqa: E402
from reader_models import BYLER, require_dataset, shipped_int8_float_activations  # noqa: E402

from kosti.models import CLASSIFIER_NCNN, DETECTOR_NCNN, DETECTOR_ONNX  # noqa: E402
from kosti.sim.synthetic import synthetic_frame  # noqa: E402
from kosti.vision.ncnn_backend import NcnnClassifier, NcnnDetector  # noqa: E402
from kosti.vision.onnx_backend import ModelLoadError, OnnxDetector  # noqa: E402
from kosti.vision.reader import DiceReader, load_image  # noqa: E402


def _box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element-wise IoU of two ``(K, 4)`` xyxy arrays."""
    lt, rb = np.maximum(a[:, :2], b[:, :2]), np.minimum(a[:, 2:], b[:, 2:])
    inter = np.prod(np.clip(rb - lt, 0, None), axis=1)
    area = lambda x: np.prod(x[:, 2:] - x[:, :2], axis=1)  # noqa: E731
    return inter / (area(a) + area(b) - inter)


def _pair(a, b):
    """Match two readings' dice greedily by IoU; returns (IoUs, values a, values b) of the pairs."""
    ious, va, vb, used = [], [], [], set()
    for i in range(len(a)):
        cand = [(float(_box_iou(a.xyxy[i : i + 1], b.xyxy[j : j + 1])[0]), j) for j in range(len(b)) if j not in used]
        if not cand:
            break
        best, j = max(cand)
        used.add(j)
        ious.append(best), va.append(int(a.value[i])), vb.append(int(b.value[j]))
    return np.array(ious), va, vb


def test_head_map_decoding_equals_the_onnx_exports_output():
    """The head maps decoded by :func:`decode_head` give the ONNX export's own raw output ``(5, N)`` — the
    same anchors in the same order, the same boxes and scores — on a 1280×720 frame at 640×384."""
    frame = synthetic_frame(n_dice=5, seed=0)[0]
    ncnn_det, onnx_det = NcnnDetector(DETECTOR_NCNN), OnnxDetector(shipped_int8_float_activations()["det_onnx"])
    assert ncnn_det.head_maps is not None and len(ncnn_det.head_maps[0]) == 3
    mine, p1 = ncnn_det.raw(frame)
    ref, p2 = onnx_det.raw(frame)
    assert p1 == p2 and ref.shape == (1, 5, 48 * 80 + 24 * 40 + 12 * 20) and mine.shape == ref.shape[1:]
    assert np.abs(mine[4] - ref[0, 4]).max() < 5e-3  # scores (float16 weights and storage: 0.003 at most seen)
    sure = ref[0, 4] > 0.05
    assert sure.sum() >= 5 and np.abs(mine[:4, sure] - ref[0, :4, sure].T).max() < 0.1  # boxes, pixels


def test_a_camera_frame_runs_at_the_rectangle_and_matches_onnx():
    """A 1280×720 frame is letterboxed to 640×384 (not 640×640), as the ONNX export's dynamic shape, and
    both runtimes find the same boxes with the same scores."""
    frame = synthetic_frame(n_dice=6, seed=1)[0]
    ncnn_det, onnx_det = NcnnDetector(DETECTOR_NCNN), OnnxDetector(shipped_int8_float_activations()["det_onnx"])
    x, _ = ncnn_det.preprocess(frame)
    assert x.shape == (1, 3, 384, 640)
    a, b = onnx_det.detect(frame, 0.05), ncnn_det.detect(frame, 0.05)
    assert len(a[0]) == len(b[0])
    if len(a[0]):
        assert _box_iou(a[0], b[0]).min() > 0.99
        assert np.abs(a[1] - b[1]).max() < 0.01


def test_classifier_probabilities_match_onnx():
    from kosti.vision.onnx_backend import OnnxClassifier

    crops = np.random.default_rng(2).integers(0, 255, (5, 64, 64, 3), dtype=np.uint8)
    p_ncnn = NcnnClassifier(CLASSIFIER_NCNN).classify(crops)
    p_onnx = OnnxClassifier(shipped_int8_float_activations()["cls_onnx"]).classify(crops)
    assert p_ncnn.shape == p_onnx.shape == (5, 7)
    np.testing.assert_allclose(p_ncnn.sum(1), 1.0, atol=1e-4)
    assert np.abs(p_ncnn - p_onnx).max() < 0.01
    assert NcnnClassifier(CLASSIFIER_NCNN).classify(crops[:0]).shape == (0, 7)


def test_byler_photos_read_the_same_as_onnx():
    """On byler-d6 test photos: the same number of dice, the same faces, boxes IoU ≥ 0.95."""
    photos = sorted((require_dataset(BYLER) / "images" / "test").glob("*.jpg"))[:12]
    floats = shipped_int8_float_activations()
    onnx, ncnn = DiceReader(floats["det_onnx"], floats["cls_onnx"], backend="onnx"), DiceReader(backend="ncnn")
    assert ncnn.det_path == DETECTOR_NCNN and ncnn.cls_path == CLASSIFIER_NCNN
    total = 0
    for photo in photos:
        img = load_image(photo)
        a, b = onnx.read(img), ncnn.read(img)
        assert len(a) == len(b), photo.name
        ious, va, vb = _pair(a, b)
        assert va == vb and (len(ious) == 0 or ious.min() >= 0.95), photo.name
        total += len(a)
    assert total >= 40


def test_auto_backend_reads_ncnn_folders_without_ultralytics():
    reader = DiceReader(det_path=DETECTOR_NCNN, cls_path=CLASSIFIER_NCNN)  # backend auto
    assert type(reader.detector).__name__ == "NcnnDetector" and type(reader.classifier).__name__ == "NcnnClassifier"


def test_bad_ncnn_models_are_one_line_errors(tmp_path):
    with pytest.raises(ModelLoadError, match="model not found"):
        NcnnDetector(tmp_path / "nothing")
    with pytest.raises(ModelLoadError, match="NCNN export folder"):
        NcnnDetector(DETECTOR_ONNX)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelLoadError, match="not an NCNN export folder"):
        NcnnDetector(tmp_path / "empty")
    with pytest.raises(ModelLoadError, match="expected a classify model"):
        NcnnClassifier(DETECTOR_NCNN)
    bare = tmp_path / "bare"
    shutil.copytree(DETECTOR_NCNN, bare)
    (bare / "metadata.yaml").unlink()
    with pytest.raises(ModelLoadError, match="metadata.yaml"):
        NcnnDetector(bare)
    broken = tmp_path / "broken"
    shutil.copytree(DETECTOR_NCNN, broken)
    (broken / "model.ncnn.param").write_text("not a param file\n")
    with pytest.raises(ModelLoadError, match="not a readable NCNN model"):
        NcnnDetector(broken)
    with pytest.raises(ModelLoadError, match="onnx backend needs an .onnx file"):
        DiceReader(det_path=DETECTOR_NCNN, backend="onnx")
    lying = tmp_path / "lying"
    shutil.copytree(DETECTOR_NCNN, lying)
    (lying / "model.ncnn.param").write_text("7767517\n2 2\nInput in0 0 1 in0\nSigmoid s 1 1 in0 out0\n")
    with pytest.raises(ModelLoadError, match="2 outputs per level"):
        NcnnDetector(lying)


def test_kosti_read_ncnn_json_never_imports_torch_or_ultralytics():
    """``kosti read --backend ncnn --json``: one JSON document on stdout, dice equal to the ONNX reader's
    (same count; each ONNX die paired with an NCNN box of IoU >= 0.95 and the same face), within the Pi's
    300 MB peak RSS, and neither torch nor Ultralytics imported (an import hook refuses them)."""
    photos = [str(p) for p in sorted((require_dataset(BYLER) / "images" / "test").glob("*.jpg"))[:3]]
    proc, guard = run_lean(["read", "--backend", "ncnn", "--json", *photos])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert guard["attempts"] == [] and guard["loaded"] == []
    assert guard["peak_rss_mb"] <= 300, guard
    doc = json.loads(proc.stdout)  # exactly one document: anything else on stdout fails here
    floats = shipped_int8_float_activations()
    onnx = DiceReader(floats["det_onnx"], floats["cls_onnx"], backend="onnx")
    for entry, photo in zip(doc, photos, strict=True):
        ref = onnx.read_path(photo)
        assert entry["image"] == photo and len(entry["dice"]) == len(ref)
        assert sorted(d["value"] for d in entry["dice"]) == sorted(int(v) for v in ref.value)
        mine = np.array([d["box"] for d in entry["dice"]], dtype=float).reshape(-1, 4)
        used: set[int] = set()
        for i in range(len(ref)):
            iou, j = max((float(_box_iou(ref.xyxy[i : i + 1], mine[j : j + 1])[0]), j)
                         for j in range(len(mine)) if j not in used)
            used.add(j)
            assert iou >= 0.95, (photo, i, iou)
            assert entry["dice"][j]["value"] == int(ref.value[i]), (photo, i)


def test_kosti_watch_with_ncnn_models_never_imports_torch_or_ultralytics(tmp_path):
    """The live pipeline (source → settle → reader → throw) on the NCNN models: one JSON document, the
    throws read, and the lean path holds (what ``kosti run`` with ``backend = "ncnn"`` runs)."""
    photos = sorted((require_dataset(BYLER) / "images" / "test").glob("*.jpg"))[:2]
    for p in photos:
        shutil.copy2(p, tmp_path / p.name)
    proc, guard = run_lean(["watch", "--json", "--photos", "--model", str(DETECTOR_NCNN), "--cls-model", str(CLASSIFIER_NCNN),
                            str(tmp_path)])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert guard["attempts"] == [] and guard["loaded"] == []
    doc = json.loads(proc.stdout)
    assert len(doc["throws"]) == 2 and all(len(t["dice"]) >= 4 for t in doc["throws"])


def test_the_lean_venv_check_fails_on_a_mismatch_a_low_iou_or_too_much_memory():
    """``benchmarks/lean_read_check.py`` (run by ``scripts/lean_venv_check.sh``) exits non-zero unless the
    NCNN reader gives the (INT8) ONNX reader's dice within the measured 8-bit tolerances (at most 3 photos
    with another count, 3 % of faces, every box IoU >= 0.75) and stays within 300 MB."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "lean_read_check.py"
    spec = importlib.util.spec_from_file_location("lean_read_check", path)
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)  # defines only; the check itself runs under __main__
    good = {"dice": 278, "count_mismatches": 2, "face_mismatches": 4, "min_iou": 0.82,
            "peak_rss_mb": {"ncnn_1_image": 187, "ncnn_50_images": 215, "ncnn_kosti_run_20s": 200,
                            "onnx_50_images": 320}}
    assert check.failures(good) == []  # the ONNX runs are not held to the Pi's budget
    assert check.failures({**good, "count_mismatches": 4}) == [
        "4 image(s) with another number of dice in ncnn than in onnx (> 3)"]
    assert check.failures({**good, "face_mismatches": 9}) == ["9 of 278 dice read another face in ncnn than in onnx (> 3%)"]
    assert check.failures({**good, "min_iou": 0.74}) == ["smallest box IoU 0.74 < 0.75"]
    assert check.failures({**good, "min_iou": None}) == ["smallest box IoU None < 0.75"]
    assert check.failures({**good, "peak_rss_mb": {**good["peak_rss_mb"], "ncnn_kosti_run_20s": 301}}) == [
        "peak RSS of ncnn_kosti_run_20s 301 MB > 300 MB"]
