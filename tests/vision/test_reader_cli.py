"""``kosti read``: JSON contract, unreadable images (exit 2, file named, --keep-going), no torch."""

from __future__ import annotations

import json
import subprocess
import sys

import cv2
import numpy as np
import pytest
from reader_models import REPO, untrained_models

from kosti.sim.synthetic import synthetic_frame
from kosti.vision.reader import DiceReader, ImageReadError, load_image


@pytest.fixture(scope="module")
def models():
    return untrained_models()


@pytest.fixture()
def images(tmp_path):
    good = tmp_path / "good.jpg"
    cv2.imwrite(str(good), synthetic_frame(640, 480, 3, 60, seed=5)[0])
    empty = tmp_path / "empty.jpg"
    empty.write_bytes(b"")
    corrupt = tmp_path / "corrupt.png"
    corrupt.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    text = tmp_path / "notes.jpg"
    text.write_text("not an image")
    return {"good": good, "empty": empty, "corrupt": corrupt, "text": text, "missing": tmp_path / "nope.jpg",
            "dir": tmp_path}


def _kosti(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kosti", *args], capture_output=True, text=True, cwd=REPO,
                          timeout=300)


@pytest.mark.parametrize("kind,reason", [("empty", "empty file"), ("corrupt", "not a readable image"),
                                         ("text", "not a readable image"), ("missing", "no such file"),
                                         ("dir", "is a directory")])
def test_load_image_errors_name_the_file(images, kind, reason):
    with pytest.raises(ImageReadError) as e:
        load_image(images[kind])
    assert str(images[kind]) in str(e.value) and reason in str(e.value)
    assert e.value.exit_code == 2


def test_load_image_non_ascii_path(tmp_path):
    p = tmp_path / "кости.png"
    img = synthetic_frame(320, 240, 2, 40, seed=1)[0]
    assert cv2.imencode(".png", img)[1].tofile(str(p)) is None
    assert np.array_equal(load_image(p), img)


def test_read_path_raises_for_bad_file(models, images):
    reader = DiceReader(models["det_onnx"], models["cls_onnx"])
    with pytest.raises(ImageReadError):
        reader.read_path(images["corrupt"])
    from_file, from_array = reader.read_path(images["good"]), reader.read(load_image(images["good"]))
    assert len(from_file) == len(from_array) and np.array_equal(from_file.xyxy, from_array.xyxy)


def test_cli_read_json_contract(models, images):
    r = _kosti("read", "--json", "--model", str(models["det_onnx"]), "--cls-model", str(models["cls_onnx"]),
               "--conf", "0.6", str(images["good"]))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert isinstance(doc, list) and len(doc) == 1
    entry = doc[0]
    assert set(entry) == {"image", "width", "height", "ms", "dice"}
    assert entry["image"] == str(images["good"]) and (entry["width"], entry["height"]) == (640, 480)
    assert entry["ms"] > 0 and entry["dice"]
    for d in entry["dice"]:
        assert set(d) - {"uncertain"} == {"value", "confidence", "box"}
        assert d["value"] in range(1, 7) and 0 <= d["confidence"] <= 1  # cli.md: the face, 1–6
        x1, y1, x2, y2 = d["box"]
        assert 0 <= x1 < x2 <= 640 and 0 <= y1 < y2 <= 480
    # same numbers as the library: a read face, or an uncertain die's most likely face, flagged
    det = DiceReader(models["det_onnx"], models["cls_onnx"], conf=0.6).read_path(images["good"])
    assert [d["value"] for d in entry["dice"]] == np.where(det.value > 0, det.value, det.data["guess"]).tolist()
    assert [d.get("uncertain", False) for d in entry["dice"]] == (det.value == 0).tolist()


def test_cli_read_no_tta_reads_each_die_once(models, images):
    """``--no-tta`` gives the library's one-view reading (confidences differ from the 4-view default)."""
    args = ("read", "--json", "--model", str(models["det_onnx"]), "--cls-model", str(models["cls_onnx"]),
            "--conf", "0.6", "--value-conf", "0")
    one, four = (json.loads(_kosti(*args, *extra, str(images["good"])).stdout)[0]["dice"]
                 for extra in (("--no-tta",), ()))
    det = DiceReader(models["det_onnx"], models["cls_onnx"], conf=0.6, value_conf=0.0, tta=False)
    expect = det.read_path(images["good"]).value_confidence
    assert [d["confidence"] for d in one] == pytest.approx(expect.tolist(), abs=1e-3)
    assert [d["confidence"] for d in one] != pytest.approx([d["confidence"] for d in four], abs=1e-3)


@pytest.mark.parametrize("kind", ["empty", "corrupt", "missing"])
def test_cli_read_unreadable_exits_2(models, images, kind):
    r = _kosti("read", "--model", str(models["det_onnx"]), "--cls-model", str(models["cls_onnx"]),
               str(images["good"]), str(images[kind]))
    assert r.returncode == 2
    assert str(images[kind]) in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert r.stdout == ""


def test_cli_read_keep_going(models, images):
    r = _kosti("read", "--json", "--keep-going", "--model", str(models["det_onnx"]), "--cls-model",
               str(models["cls_onnx"]), str(images["corrupt"]), str(images["good"]), str(images["missing"]))
    assert r.returncode == 2
    doc = json.loads(r.stdout)
    assert [e["image"] for e in doc] == [str(images["corrupt"]), str(images["good"]), str(images["missing"])]
    assert "error" in doc[0] and "error" in doc[2] and "dice" in doc[1]
    assert str(images["corrupt"]) in r.stderr and str(images["missing"]) in r.stderr


def test_cli_read_missing_model_exits_2(images, tmp_path):
    r = _kosti("read", "--model", str(tmp_path / "none.onnx"), str(images["good"]))
    assert r.returncode == 2 and "none.onnx" in r.stderr


def test_cli_read_rejects_bad_conf(models, images):
    r = _kosti("read", "--conf", "1.5", str(images["good"]))
    assert r.returncode == 2 and "--conf" in r.stderr


def test_runtime_never_imports_torch(models, images):
    code = f"""
import sys, json
from kosti.cli import main
rc = main(["read", "--json", "--model", {str(models["det_onnx"])!r}, "--cls-model", {str(models["cls_onnx"])!r},
           {str(images["good"])!r}])
from kosti.vision.reader import DiceReader
DiceReader({str(models["det_onnx"])!r}, {str(models["cls_onnx"])!r}).read_path({str(images["good"])!r})
heavy = sorted(m for m in ("torch", "torchvision", "ultralytics") if m in sys.modules)
print("HEAVY=" + json.dumps(heavy), file=sys.stderr)
sys.exit(rc)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "HEAVY=[]" in r.stderr


def test_cli_export_onnx_runs_in_the_reader(models, images, tmp_path):
    import shutil

    pt = tmp_path / "det.pt"
    shutil.copy(models["det_pt"], pt)
    r = _kosti("export", str(pt), "--format", "onnx", "--imgsz", "256", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)["output"]  # exactly one JSON document on stdout
    from kosti.vision.onnx_backend import OnnxDetector

    det = OnnxDetector(out)
    assert det.info.imgsz == (256, 256) and det.names == {0: "die"}
    d = DiceReader(out, models["cls_onnx"], conf=0.5).read_path(images["good"])  # the seeded weights find boxes
    assert len(d) > 0 and (d.xyxy >= 0).all() and (d.xyxy[:, [0, 2]] <= 640).all() and (d.xyxy[:, [1, 3]] <= 480).all()


def test_cli_export_rejects_non_pt(models, tmp_path):
    r = _kosti("export", str(models["det_onnx"]))
    assert r.returncode == 2 and ".pt" in r.stderr
    r = _kosti("export", str(tmp_path / "missing.pt"))
    assert r.returncode == 2 and "missing.pt" in r.stderr


def test_read_defaults_follow_the_config_backend_and_the_active_version(tmp_path, monkeypatch):
    """cli.md: ``kosti read`` uses the active model version (else the shipped one) and, without
    ``--backend``, the config's ``reader.backend`` (else onnx)."""
    import argparse

    from kosti.models import CLASSIFIER_NCNN, CLASSIFIER_ONNX, DETECTOR_NCNN, DETECTOR_ONNX
    from kosti.registry import Registry
    from kosti.vision.cli import _models

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("KOSTI_READER__BACKEND", raising=False)
    monkeypatch.delenv("KOSTI_CONFIG", raising=False)  # the search order itself is under test
    import kosti.config.load

    monkeypatch.setattr(kosti.config.load, "SYSTEM_CONFIG", tmp_path / "etc" / "kosti.toml")  # none on this machine
    ns = lambda **kw: argparse.Namespace(**{"backend": None, "model": None, "cls_model": None, **kw})  # noqa: E731
    assert _models(ns()) == ("onnx", DETECTOR_ONNX, CLASSIFIER_ONNX)
    assert _models(ns(backend="ncnn")) == ("ncnn", DETECTOR_NCNN, CLASSIFIER_NCNN)
    assert _models(ns(model=tmp_path / "x.onnx")) == ("auto", tmp_path / "x.onnx", None)
    (tmp_path / "config" / "kosti").mkdir(parents=True)
    (tmp_path / "config" / "kosti" / "kosti.toml").write_text('[reader]\nbackend = "ncnn"\n')
    assert _models(ns()) == ("ncnn", DETECTOR_NCNN, CLASSIFIER_NCNN)
    reg = Registry()
    version = reg.add_version({"det": DETECTOR_ONNX, "cls": CLASSIFIER_ONNX}, {}, activate=False)
    reg.use(version, force=True)
    assert _models(ns(backend="onnx")) == ("onnx", reg.root / version / "det.onnx", reg.root / version / "cls.onnx")
