"""``kosti train``'s contract (``../shared/docs/cli.md``) without training a model: the ``--json`` document
always has ``version``, ``activated``, ``before``, ``after`` and ``minutes``, ``before`` and ``after`` are full
``kosti eval --json`` documents, bad input is one line on stderr and exit 2 (a malformed data.yaml, as
``kosti eval`` says it; an install without the ``train`` extra, naming the install command).

Training itself is replaced by a stand-in that hands back the shipped models (as in ``test_gate.py``), or
never reached; the photos are a few shipped reference photos that the shipped reader reads right.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import ci_guard
import numpy as np
import pytest

from kosti.cli import main

#: The ``kosti eval --json`` document's keys (cli.md).
EVAL_KEYS = {"images", "dice", "precision", "recall", "die_accuracy", "image_exact", "mAP50", "mAP50_95",
             "ms_per_image_median", "confusion"} | {"uncertain", "wrong", "confusion_full"}  # cli.md's, then additions
#: Keys every ``kosti train --json`` document has (cli.md).
TRAIN_KEYS = {"version", "activated", "before", "after", "minutes"}


def _reference() -> tuple[Path, str]:
    from kosti.datasets.replay import ReplayUnavailable, reference

    try:
        return reference()
    except ReplayUnavailable as exc:
        ci_guard.missing(str(exc))


def _link(images: list[Path], dest: Path) -> Path:
    """A plain YOLO folder (images/, labels/) of links to ``images`` and their labels."""
    from kosti.datasets.prepare import label_path

    for sub in ("images", "labels"):
        (dest / sub).mkdir(parents=True)
    for img in images:
        os.symlink(img, dest / "images" / img.name)
        os.symlink(label_path(img), dest / "labels" / f"{img.stem}.txt")
    return dest


@pytest.fixture(scope="module")
def read_right(tmp_path_factory) -> Path:
    """6 reference photos with dice that the shipped reader reads all right (recall and die accuracy 1)."""
    from kosti.models import CLASSIFIER_ONNX, DETECTOR_ONNX
    from kosti.vision.evaluate import Dataset, evaluate, load_dataset
    from kosti.vision.reader import DiceReader

    ds = load_dataset(*_reference())
    reader = DiceReader(DETECTOR_ONNX, CLASSIFIER_ONNX)
    chosen: list[Path] = []
    for item in ds.items:
        one = evaluate(reader, Dataset([item], ds.class_values, ds.root, ds.split), compute_map=False)
        if one.n_dice and one.recall == 1.0 and one.die_accuracy == 1.0:
            chosen.append(item.image)
        if len(chosen) == 6:
            break
    assert len(chosen) == 6, "the shipped reader reads at least 6 reference photos right"
    return _link(chosen, tmp_path_factory.mktemp("photos") / "read-right")


@pytest.fixture
def small_reference(tmp_path, monkeypatch) -> Path:
    """The gate's reference set cut to 4 photos (its logic, not its statistics, is under test here)."""
    from kosti.datasets import replay

    ref, _ = _reference()
    small = _link(sorted((ref / "images").iterdir())[:4], tmp_path / "reference")
    monkeypatch.setattr(replay, "reference", lambda: (small, "train"))
    return small


def _shipped_pair(plan, out, ncnn=False):
    """Stands in for Ultralytics: "trains" the shipped models, unchanged."""
    from kosti.models import CLASSIFIER_ONNX, DETECTOR_ONNX

    out.mkdir(parents=True, exist_ok=True)
    (out / "dice_det.onnx").write_bytes(DETECTOR_ONNX.read_bytes())
    (out / "dice_cls.onnx").write_bytes(CLASSIFIER_ONNX.read_bytes())
    return {"det": out / "dice_det.onnx", "cls": out / "dice_cls.onnx"}


def _no_training(plan, out, ncnn=False):
    raise AssertionError("no training pass may run here")


def _the_json(capsys) -> dict:
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1, "cli.md: the JSON document is the only line on stdout"
    return json.loads(out[0])


def _is_eval_document(doc) -> bool:
    from kosti.vision.evaluate import EvalReport

    return isinstance(doc, dict) and set(doc) == EVAL_KEYS == set(EvalReport().to_json())


def test_nothing_to_retrain_still_has_every_documented_key(read_right, tmp_path, monkeypatch, capsys):
    """6 photos the current reader already reads: no training, no version — ``version`` is null (not absent),
    ``activated`` false, ``before``/``after`` the held-back photos' full eval document."""
    from kosti.datasets import train_cli

    monkeypatch.setattr(train_cli, "run_training", _no_training)
    rc = main(["train", "--data", str(read_right), "--registry", str(tmp_path / "reg"), "--work",
               str(tmp_path / "work"), "--json"])
    assert rc == 0
    summary = _the_json(capsys)
    assert set(summary) >= TRAIN_KEYS
    assert summary["version"] is None and summary["activated"] is False and summary["trained"] == "nothing"
    assert _is_eval_document(summary["before"]) and summary["before"] == summary["after"]
    assert summary["before"]["images"] == summary["held_back_images"] == 3
    assert summary["before"]["recall"] == 1.0 and summary["before"]["mAP50"] > 0
    assert np.asarray(summary["before"]["confusion"]).shape == (6, 6)
    assert isinstance(summary["minutes"], (int, float))


@pytest.mark.parametrize("where", ["registry", "out"])
def test_before_and_after_are_full_eval_documents(where, read_right, small_reference, tmp_path, monkeypatch, capsys):
    """``--retrain`` (the stand-in returns the shipped pair): registered and activated, or written to ``--out``
    (no version: null, not activated); either way ``before`` and ``after`` are ``kosti eval --json`` documents."""
    from kosti.datasets import train_cli

    monkeypatch.setattr(train_cli, "run_training", _shipped_pair)
    target = ["--registry", str(tmp_path / "reg")] if where == "registry" else ["--out", str(tmp_path / "out")]
    rc = main(["train", "--data", str(read_right), *target, "--work", str(tmp_path / "work"), "--retrain",
               "--no-replay", "--json"])
    assert rc == 0
    summary = _the_json(capsys)
    assert set(summary) >= TRAIN_KEYS
    for key in ("before", "after"):
        assert _is_eval_document(summary[key]), key
        assert summary[key]["images"] == 3 and summary[key]["mAP50"] > 0
    assert summary["before"]["confusion"] == summary["after"]["confusion"]  # the same models
    if where == "registry":
        assert isinstance(summary["version"], str) and summary["activated"] is True
    else:
        assert summary["version"] is None and summary["activated"] is False


def _gray_photos(dest: Path, n: int = 2) -> Path:
    """A plain YOLO folder of ``n`` gray photos, each labelled with one die (which no reader finds)."""
    import cv2

    for sub in ("images", "labels"):
        (dest / sub).mkdir(parents=True)
    for i in range(n):
        cv2.imwrite(str(dest / "images" / f"p{i}.jpg"), np.full((96, 96, 3), 110, np.uint8))
        (dest / "labels" / f"p{i}.txt").write_text("2 0.5 0.5 0.2 0.2\n")
    return dest


@pytest.mark.parametrize("flag", ["--data", "--base-data", "--val"])
def test_a_malformed_yaml_is_one_line_and_exit_2_as_in_eval(flag, tmp_path, monkeypatch, capsys):
    from kosti.datasets import train_cli

    monkeypatch.setattr(train_cli, "run_training", _no_training)
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [\n")
    assert main(["eval", "--data", str(bad), "--json"]) == 2
    eval_err = capsys.readouterr().err.strip().splitlines()
    data = [] if flag == "--data" else ["--data", str(_gray_photos(tmp_path / "photos"))]
    rc = main(["train", *data, flag, str(bad), "--registry", str(tmp_path / "reg"), "--work",
               str(tmp_path / "work"), "--json"])
    assert rc == 2
    cap = capsys.readouterr()
    err = cap.err.strip().splitlines()
    assert cap.out == "" and len(err) == 1
    assert err[0] == eval_err[0].replace("kosti eval:", "kosti train:")
    assert "malformed YAML" in err[0] and "bad.yaml" in err[0]


def test_training_without_the_train_extra_is_one_line_naming_the_install(tmp_path, monkeypatch, capsys):
    """The default install has no torch and no Ultralytics: ``kosti train --retrain`` says how to install the
    ``train`` extra (exit 2) instead of a ModuleNotFoundError traceback."""
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now fails as where it is not installed
    monkeypatch.setitem(sys.modules, "ultralytics", None)
    photos = _gray_photos(tmp_path / "photos")
    rc = main(["train", "--data", str(photos), "--retrain", "--no-replay", "--holdout", "0", "--registry",
               str(tmp_path / "reg"), "--work", str(tmp_path / "work"), "--json"])
    assert rc == 2
    cap = capsys.readouterr()
    err = cap.err.strip().splitlines()
    assert cap.out == ""
    assert len([line for line in err if line.startswith("kosti train: training needs")]) == 1
    assert "Traceback" not in cap.err
    assert "bash scripts/setup --train" in err[-1] and "pip install 'kosti[train]'" in err[-1]
    assert "torch" in err[-1]


@pytest.mark.parametrize("share", ["2", "-0.1", "half"])
def test_a_classifier_share_outside_0_1_is_one_line_and_exit_2(share, tmp_path, capsys):
    """``--cls-share`` takes ``auto`` or a share 0–1 of the fine-tuned weights (issue 41); anything else is refused
    before any photo is read or any folder written."""
    with pytest.raises(SystemExit) as stop:
        main(["train", "--data", str(_gray_photos(tmp_path / "photos")), "--cls-share", share, "--registry",
              str(tmp_path / "reg"), "--work", str(tmp_path / "work"), "--json"])
    assert stop.value.code == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.strip().splitlines() == [
        f"kosti train: argument --cls-share: {share!r}: give auto or a share from 0 to 1 (see kosti train --help)"]
    assert not (tmp_path / "work").exists() and not (tmp_path / "reg").exists()
