"""One active model everywhere: ``kosti read`` / ``eval`` / ``watch`` read with the registry's active version
(its files and its own calibration), ``--model`` overrides, a broken pointer is exit 2 (cli.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cv2
import pytest
from reader_models import REPO, untrained_models

from kosti.registry import Registry, reader_files
from kosti.sim.synthetic import synthetic_frame
from kosti.vision.reader import DiceReader


@pytest.fixture(scope="module")
def models():
    return untrained_models()


@pytest.fixture()
def setup(tmp_path, models):
    """A registry (under XDG_DATA_HOME) whose active version is the untrained pair with temperature 3."""
    data = tmp_path / "xdg"
    reg = Registry(data / "kosti" / "models")
    src = tmp_path / "v"
    src.mkdir()
    (src / "reader.json").write_text(json.dumps({"temperature": 3.0}))
    for role in ("det", "cls"):
        (src / f"{role}.onnx").write_bytes(Path(models[f"{role}_onnx"]).read_bytes())
    reg.add_version({"det": src / "det.onnx", "cls": src / "cls.onnx"}, version="mine", activate=True, force=True)
    img = tmp_path / "good.jpg"
    cv2.imwrite(str(img), synthetic_frame(640, 480, 3, 60, seed=5)[0])
    env = {**os.environ, "XDG_DATA_HOME": str(data)}
    return reg, img, env


def _kosti(env, *args):
    return subprocess.run([sys.executable, "-m", "kosti", *args], capture_output=True, text=True, cwd=REPO,
                          timeout=300, env=env)


def test_reader_files_follow_the_active_version(setup):
    reg, _img, _env = setup
    det, cls, version = reader_files(registry=reg)
    assert version == "mine" and det == reg.root / "mine" / "det.onnx" and cls == reg.root / "mine" / "cls.onnx"
    assert reader_files("a.onnx", None, registry=reg) == (Path("a.onnx"), None, "custom")
    reg.use("shipped", force=True)
    assert reader_files(registry=reg)[2] == "shipped"


def test_read_uses_the_active_version_and_its_calibration(setup, models):
    reg, img, env = setup
    r = _kosti(env, "read", "--json", "--conf", "0.6", "--value-conf", "0", str(img))
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)[0]["dice"]
    active = DiceReader(reg.root / "mine" / "det.onnx", reg.root / "mine" / "cls.onnx", conf=0.6, value_conf=0)
    assert active.temperature == 3.0  # the version's own reader.json
    want = active.read(cv2.imread(str(img))).to_dicts()
    assert got and [d["confidence"] for d in got] == [d["confidence"] for d in want]
    assert [d["box"] for d in got] == [d["box"] for d in want]
    # the same files at another temperature read other confidences: the test can tell them apart
    other = DiceReader(models["det_onnx"], models["cls_onnx"], conf=0.6, value_conf=0, temperature=1.0)
    assert [d["confidence"] for d in other.read(cv2.imread(str(img))).to_dicts()] != [d["confidence"] for d in got]
    # --model / --cls-model override the registry
    r2 = _kosti(env, "read", "--json", "--conf", "0.6", "--value-conf", "0", "--model", str(models["det_onnx"]),
                "--cls-model", str(models["cls_onnx"]), str(img))
    assert r2.returncode == 0, r2.stderr
    assert [d["confidence"] for d in json.loads(r2.stdout)[0]["dice"]] == \
        [d["confidence"] for d in other.read(cv2.imread(str(img))).to_dicts()]


def test_a_broken_active_version_is_exit_2(setup):
    reg, img, env = setup
    (reg.root / "mine" / "cls.onnx").unlink()
    r = _kosti(env, "read", "--json", str(img))
    assert r.returncode == 2 and r.stdout == ""
    assert "mine" in r.stderr and len(r.stderr.strip().splitlines()) == 1
