"""``kosti train`` end to end on the CPU: a few steps on a few synthetic images.

Proves the training entry point works offline (models built from YAML, ``amp=False``, no plots), that it
exports ONNX models the runtime reader loads, and that with a held-back part it measures old and new
model, registers the new version and refuses to activate a worse one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import ci_guard
import numpy as np
import pytest

ci_guard.need_module("ultralytics", "the train extra (scripts/test installs it)")

from kosti.cli import main  # noqa: E402


@pytest.fixture(scope="module")
def synth_faces(tmp_path_factory) -> Path:
    """12 seeded synthetic scenes with face labels (procedural dice only: no shared data needed)."""
    out = tmp_path_factory.mktemp("synth") / "faces"
    rc = main(["datasets", "synth", "--out", str(out), "--n", "12", "--seed", "3", "--classes", "faces",
               "--imgsz", "192", "--real-frac", "0", "--real-bg-frac", "0", "--val-frac", "0.25", "--no-progress"])
    assert rc == 0
    assert len(list((out / "images" / "train").glob("*.jpg"))) >= 8
    return out


def _tiny_args(work: Path) -> list[str]:
    return ["--epochs-det", "1", "--epochs-cls", "1", "--imgsz", "96", "--batch-det", "4",
            "--batch-cls", "16", "--work", str(work), "--seed", "1"]


@pytest.mark.slow
def test_train_from_scratch_exports_a_working_reader(synth_faces, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("YOLO_OFFLINE", "1")
    out = tmp_path / "models"
    rc = main(["train", "--data", f"{synth_faces}:train", "--val", f"{synth_faces}:val", "--from-scratch",
               "--holdout", "0", "--out", str(out), "--json", "--no-replay", *_tiny_args(tmp_path / "work")])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["train_images"] >= 8
    for name in ("dice_det.onnx", "dice_cls.onnx", "dice_det.pt", "dice_cls.pt"):
        assert (out / name).stat().st_size > 10_000, name
    from kosti.datasets.quantize import is_quantized

    # INT8 like the shipped reader, calibrated on the prepared training photos; no temporary file left behind
    assert is_quantized(out / "dice_det.onnx") and is_quantized(out / "dice_cls.onnx")
    assert not list(out.glob("*.int8.onnx"))

    from kosti.vision.reader import DiceReader

    reader = DiceReader(det_path=out / "dice_det.onnx", cls_path=out / "dice_cls.onnx", conf=0.001)
    frame = np.full((240, 320, 3), 127, np.uint8)
    dets = reader.read(frame)  # an untrained model finds noise or nothing, but must run and keep shapes
    assert dets.xyxy.shape[1] == 4 and len(dets.value) == len(dets)


@pytest.fixture
def no_network(monkeypatch):
    """Fail the test on any attempt to open a network connection or resolve a name (training must be
    offline by construction): every attempt is recorded and refused with OSError."""
    import socket

    attempts: list[str] = []

    def refuse(kind):
        def _refuse(*args, **kwargs):
            attempts.append(f"{kind}{args[1:] if kind != 'getaddrinfo' else args[:2]}")
            raise OSError(f"network access during training: {kind}")
        return _refuse

    monkeypatch.setattr(socket.socket, "connect", refuse("connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("connect_ex"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    yield attempts
    assert attempts == [], f"training tried to reach the network: {attempts}"


@pytest.mark.slow
def test_retrain_registers_and_compares_on_held_back_images(synth_faces, tmp_path, capsys, monkeypatch, no_network):
    """Fine-tune from a base folder, measure old vs new on the held-back images (and the reference photos),
    register the version; it is activated exactly when the gate passes. No socket is opened (``no_network``)."""
    monkeypatch.setenv("YOLO_OFFLINE", "1")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    base = tmp_path / "base"
    assert main(["train", "--data", f"{synth_faces}:train", "--from-scratch", "--holdout", "0", "--out",
                 str(base), "--json", "--no-replay", *_tiny_args(tmp_path / "w0")]) == 0
    capsys.readouterr()
    # Make the base the active version, as the shipped or a previous model would be.
    from kosti.registry import Registry

    reg = Registry()
    v0 = reg.add_version({"det": base / "dice_det.onnx", "cls": base / "dice_cls.onnx"}, {}, activate=False)
    reg.use(v0, force=True)

    _small_reference(tmp_path, monkeypatch)
    rc = main(["train", "--data", f"{synth_faces}:train", "--base", str(base), "--holdout", "0.25",
               "--classifier-only", "--no-replay", "--json", *_tiny_args(tmp_path / "w1")])
    assert rc == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1, "cli.md: the JSON document is the only line on stdout"
    summary = json.loads(out[0])
    assert summary["held_back_images"] >= 2 and summary["passes"] == ["classifier"]
    for key in ("die_accuracy", "recall", "precision", "image_exact"):
        assert 0.0 <= summary["after"][key] <= 1.0 and 0.0 <= summary["before"][key] <= 1.0
        assert 0.0 <= summary["reference"]["after"][key] <= 1.0
    assert summary["version"] in reg.version_names()
    from kosti.datasets.gate import gate

    passed, reason = gate({"held_back": summary["after"], "reference": summary["reference"]["after"]},
                          {"held_back": summary["before"], "reference": summary["reference"]["before"]})
    assert summary["activated"] == passed
    assert reg.active_version() == (summary["version"] if passed else v0)
    if not passed:
        assert reason in summary["refused"], "the refusal says the gate's own reason, with its numbers"
    # The fine-tune is mixed with its base: the smallest share that reads the validation crops as well as the
    # fine-tune alone (kosti.datasets.weight_mix.choose_share); every smaller share tried read fewer of them.
    from kosti.datasets.weight_mix import SHARES, share_tolerance

    mix = summary["classifier_share"]
    acc = {float(k): v for k, v in mix["accuracy"].items()}
    tol = share_tolerance(mix["crops"])  # 0.002, or one crop of a small set
    assert mix["tolerance"] == round(tol, 5)
    assert mix["share"] in SHARES and acc[mix["share"]] >= acc[1.0] - tol - 1e-6
    assert all(a < acc[1.0] - tol - 1e-6 for s, a in acc.items() if s < mix["share"])
    # What the classifier pass cost and bought, on the held-back photos (issue 41 item 3).
    (row,) = summary["pass_report"]
    assert row["pass"] == "classifier" and row["minutes"] > 0 and row["cpu_minutes"] > 0
    assert row["from"] == {k: summary["before"][k] for k in ("recall", "die_accuracy", "image_exact")}
    assert row["to"] == {k: summary["after"][k] for k in ("recall", "die_accuracy", "image_exact")}
    # Its own calibration and both sets of numbers travel with the version.
    assert json.loads((reg.root / summary["version"] / "reader.json").read_text())["temperature"] > 0
    m = reg.metrics(summary["version"])
    assert m["reference"] == summary["reference"]["after"] and m["held_back"]["images"] == summary["held_back_images"]


def _small_reference(tmp_path, monkeypatch, n: int = 6) -> Path:
    """Point the reference set at a few of its photos (the gate's logic, not its statistics, is under test)."""
    from kosti.datasets import replay

    small = tmp_path / "reference"
    for sub in ("images", "labels"):
        (small / sub).mkdir(parents=True)
    for img in sorted((replay.reference()[0] / "images").iterdir())[:n]:
        os.symlink(img, small / "images" / img.name)
        os.symlink(replay.reference()[0] / "labels" / f"{img.stem}.txt", small / "labels" / f"{img.stem}.txt")
    monkeypatch.setattr(replay, "reference", lambda: (small, "train"))
    return small


@pytest.mark.slow
def test_a_plain_yolo_folder_trains(synth_faces, tmp_path, capsys, monkeypatch, no_network):
    """``kosti train --data DIR`` with DIR a plain Ultralytics folder (images/, labels/, no review.json, no
    data.yaml): every photo is used, a version is registered with its held-back and reference numbers."""
    monkeypatch.setenv("YOLO_OFFLINE", "1")
    plain = tmp_path / "my-photos"
    for sub in ("images", "labels"):
        (plain / sub).mkdir(parents=True)
    for img in sorted((synth_faces / "images" / "train").glob("*.jpg")):
        os.symlink(img, plain / "images" / img.name)
        os.symlink(synth_faces / "labels" / "train" / f"{img.stem}.txt", plain / "labels" / f"{img.stem}.txt")
    n = len(list((plain / "images").iterdir()))
    _small_reference(tmp_path, monkeypatch)
    reg_root = tmp_path / "registry"
    rc = main(["train", "--data", str(plain), "--registry", str(reg_root), "--no-replay", "--json",
               *_tiny_args(tmp_path / "w")])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    from kosti.datasets.gate import holdout_count

    assert summary["train_images"] + summary["held_back_images"] == n
    assert summary["held_back_images"] == holdout_count(n, 0.2)
    from kosti.registry import Registry

    m = Registry(reg_root).metrics(summary["version"])
    assert set(m["held_back"]) >= {"precision", "recall", "die_accuracy"} and m["reference"]["images"] == 6


def test_train_rejects_a_malformed_label_before_training(tmp_path, capsys):
    plain = tmp_path / "bad"
    (plain / "images").mkdir(parents=True)
    (plain / "labels").mkdir()
    import cv2

    cv2.imwrite(str(plain / "images" / "a.jpg"), np.full((64, 64, 3), 100, np.uint8))
    (plain / "labels" / "a.txt").write_text("9 0.5 0.5 0.2 0.2\n")  # class 9: not a face
    rc = main(["train", "--data", str(plain), "--work", str(tmp_path / "w"), "--registry", str(tmp_path / "r")])
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "a.txt" in err[0]


def test_train_rejects_an_empty_dataset(tmp_path, capsys):
    empty = tmp_path / "empty"
    (empty / "images").mkdir(parents=True)
    (empty / "labels").mkdir()
    rc = main(["train", "--data", str(empty), "--holdout", "0", "--work", str(tmp_path / "w")])
    assert rc == 2
    assert "no images" in capsys.readouterr().err


def test_fine_tuning_keeps_the_base_detectors_input_size(tmp_path: Path) -> None:
    """A 640 px detector fine-tuned at the from-scratch default (416) would lose its small dice: without
    ``--imgsz`` training follows the size recorded in the base ``dice_det.pt``."""
    import torch

    from kosti.datasets.train import DEFAULT_IMGSZ, TrainPlan, detector_imgsz

    torch.save({"train_args": {"imgsz": 640}}, tmp_path / "dice_det.pt")
    plan = TrainPlan(train=[], val=[], work=tmp_path, base=tmp_path)
    assert detector_imgsz(plan) == 640
    assert detector_imgsz(TrainPlan(train=[], val=[], work=tmp_path, base=tmp_path, imgsz=320)) == 320
    assert detector_imgsz(TrainPlan(train=[], val=[], work=tmp_path, base=tmp_path, from_scratch=True)) == DEFAULT_IMGSZ
    assert detector_imgsz(TrainPlan(train=[], val=[], work=tmp_path, base=tmp_path / "none")) == DEFAULT_IMGSZ


def test_stripped_copy_drops_the_training_state_and_leaves_the_source(tmp_path: Path) -> None:
    """A training checkpoint copied for export or as a new start loses its optimizer state; the run's own file keeps
    it (an interrupted run resumes from it)."""
    import torch

    from kosti.datasets.train import stripped_copy
    from kosti.models import MODELS_DIR

    ckpt = torch.load(MODELS_DIR / "dice_cls.pt", map_location="cpu", weights_only=False)
    ckpt["optimizer"] = {"state": {}, "param_groups": [{"lr": 0.01}]}
    src = tmp_path / "run" / "last.pt"
    src.parent.mkdir()
    torch.save(ckpt, src)
    dst = stripped_copy(src, tmp_path / "out" / "start.pt")
    assert dst == tmp_path / "out" / "start.pt"
    assert torch.load(dst, map_location="cpu", weights_only=False).get("optimizer") is None
    assert torch.load(src, map_location="cpu", weights_only=False)["optimizer"]["param_groups"][0]["lr"] == 0.01


def test_compact_onnx_halves_the_weights_and_keeps_the_outputs(tmp_path: Path) -> None:
    """float16-stored weights + Cast: about half the bytes, same float32 results (to fp16 rounding),
    metadata kept, small tensors left alone, the rewritten file loads in ONNX Runtime."""
    onnx = ci_guard.need_module("onnx", "the train extra (scripts/test installs it)")
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    from kosti.datasets.train import compact_onnx

    rng = np.random.default_rng(0)
    w = rng.normal(0, 0.2, (32, 3, 3, 3)).astype(np.float32)
    b = rng.normal(0, 0.1, (32,)).astype(np.float32)  # 32 values < 64: stays float32
    w2 = rng.normal(0, 0.2, (8, 32, 3, 3)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["h"], pads=[1, 1, 1, 1]),
         helper.make_node("Sigmoid", ["h"], ["s"]), helper.make_node("Mul", ["h", "s"], ["a"]),
         helper.make_node("Conv", ["a", "w2"], ["y"], pads=[1, 1, 1, 1])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 16, 16])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"), numpy_helper.from_array(w2, "w2")],
        value_info=[helper.make_tensor_value_info("h", TensorProto.FLOAT, [1, 32, 16, 16])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    helper.set_model_props(model, {"names": "{0: 'die'}", "imgsz": "[640, 640]"})
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    x = rng.random((1, 3, 16, 16), np.float32)
    before_y = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]

    before, after = compact_onnx(path)
    assert after == path.stat().st_size
    assert after < 0.7 * before
    m = onnx.load(str(path))
    kinds = {i.name: i.data_type for i in m.graph.initializer}
    assert kinds == {"w__fp16": TensorProto.FLOAT16, "b": TensorProto.FLOAT, "w2__fp16": TensorProto.FLOAT16}
    assert not m.graph.value_info
    assert {p.key: p.value for p in m.metadata_props} == {"names": "{0: 'die'}", "imgsz": "[640, 640]"}
    y = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, before_y, rtol=0, atol=2e-3 * float(np.abs(before_y).max()))
    assert not np.array_equal(y, before_y)  # the weights really were rounded


def test_int8_calibration_without_photos_is_one_error_and_keeps_the_float_file(tmp_path: Path) -> None:
    import shutil
    import sys

    from kosti.datasets.train import TrainingError, quantize_onnx

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "vision"))
    from reader_models import untrained_models

    f32 = tmp_path / "dice_cls.onnx"
    shutil.copy2(untrained_models()["cls_onnx"], f32)
    before = f32.read_bytes()
    (tmp_path / "empty" / "images" / "train").mkdir(parents=True)  # a prepared set without photos
    with pytest.raises(TrainingError, match="INT8 calibration failed"):
        quantize_onnx("cls", f32, tmp_path / "empty")
    assert f32.read_bytes() == before and not list(tmp_path.glob("*.int8.onnx"))
