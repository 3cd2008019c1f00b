"""``kosti eval``: JSON contract, agreement with the library, plots, errors."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import ci_guard
import cv2
import numpy as np
import pytest
from reader_models import REPO, untrained_models

from kosti.sim.synthetic import synthetic_frame
from kosti.vision.evaluate import evaluate, evaluate_data, load_dataset
from kosti.vision.reader import DiceReader
from kosti.vision.yolo_labels import label_lines, label_text, read_labels

KEYS = {"images", "dice", "precision", "recall", "die_accuracy", "image_exact", "mAP50", "mAP50_95",
        "ms_per_image_median", "confusion"} | {"uncertain", "wrong", "confusion_full"}  # cli.md's, then additions


@pytest.fixture(scope="module")
def models():
    return untrained_models()


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """Three synthetic frames with their true dice as YOLO labels (class = face − 1)."""
    root = tmp_path_factory.mktemp("dice-ds")
    (root / "images" / "test").mkdir(parents=True)
    (root / "labels" / "test").mkdir(parents=True)
    n = 0
    for i in range(3):
        img, boxes, values = synthetic_frame(640, 480, 3 + i, 60, seed=10 + i)
        cv2.imwrite(str(root / "images" / "test" / f"f{i}.png"), img)
        lines = label_lines(np.asarray(boxes, np.float64), np.asarray(values) - 1, 640, 480, check=False)
        (root / "labels" / "test" / f"f{i}.txt").write_text(label_text(lines))
        n += len(values)
    (root / "data.yaml").write_text("path: .\ntrain: images/test\nval: images/test\ntest: images/test\n"
                                    "names: {0: '1', 1: '2', 2: '3', 3: '4', 4: '5', 5: '6'}\n")
    return root, n


def _kosti(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kosti", *args], capture_output=True, text=True, cwd=REPO,
                          timeout=600)


def test_cli_eval_json_and_plots(models, dataset, tmp_path):
    root, n_dice = dataset
    plots = tmp_path / "plots"
    r = _kosti("eval", "--data", str(root / "data.yaml"), "--model", str(models["det_onnx"]), "--cls-model",
               str(models["cls_onnx"]), "--conf", "0.6", "--json", "--plots", str(plots))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert set(doc) == KEYS
    assert doc["images"] == 3 and doc["dice"] == n_dice
    for k in ("precision", "recall", "die_accuracy", "image_exact", "mAP50", "mAP50_95"):
        assert 0.0 <= doc[k] <= 1.0
    assert doc["mAP50_95"] <= doc["mAP50"] + 1e-9
    assert doc["ms_per_image_median"] > 0
    cm = doc["confusion"]
    assert len(cm) == 6 and all(len(row) == 6 and all(isinstance(v, int) for v in row) for row in cm)
    full = np.asarray(doc["confusion_full"])
    assert full.shape == (7, 8) and (full[:6, :6] == np.asarray(cm)).all()
    assert full[:6].sum() == doc["dice"], "every labelled die is read, uncertain or missed"
    assert doc["wrong"] == int(np.asarray(cm).sum() - np.trace(np.asarray(cm)))
    assert doc["uncertain"] == int(full[:, 6].sum()), "uncertain dice on labels and on extra boxes"
    # The untrained detector fires everywhere, so every frame has extra boxes: all are error images.
    img = cv2.imread(str(plots / "confusion_matrix.png"))
    assert img is not None and img.shape[0] > 300 and img.shape[1] > 300
    errors = sorted((plots / "errors").glob("*.png"))
    assert len(errors) == 3 and cv2.imread(str(errors[0])).shape == (480 + 28, 640, 3)

    # The command reports exactly what the library computes (timing aside).
    reader = DiceReader(models["det_onnx"], models["cls_onnx"], conf=0.6)
    report = evaluate(reader, load_dataset(root / "data.yaml", "test"))
    lib = report.to_json()
    # ... and its dice sheets list every die it did not read right, one CSV row each
    with open(plots / "dice" / "dice.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == sum(len(r.missed) + len(r.extra) + len(r.wrong) for r in report.records) > 0
    assert (plots / "dice" / "sheet_00.png").is_file()
    assert {k: v for k, v in lib.items() if k != "ms_per_image_median"} == \
           {k: v for k, v in doc.items() if k != "ms_per_image_median"}
    one = evaluate_data(root, "test", detector=models["det_onnx"], classifier=models["cls_onnx"], conf=0.6)
    assert one["mAP50"] == doc["mAP50"] and one["split"] == "test"
    # script form used by `kosti train`: a dataset folder and model paths
    two = evaluate(root, detector=models["det_onnx"], classifier=models["cls_onnx"], conf=0.6)
    assert two["dice"] == doc["dice"] and two["mAP50"] == doc["mAP50"] and two["data"] == str(root)


def test_cli_eval_human_output(models, dataset):
    root, _ = dataset
    r = _kosti("eval", "--data", str(root), "--model", str(models["det_onnx"]), "--cls-model",
               str(models["cls_onnx"]), "--conf", "0.8", "--no-map")
    assert r.returncode == 0, r.stderr
    assert "precision" in r.stdout and "die_accuracy" in r.stdout and "extra" in r.stdout


def test_cli_eval_bad_dataset_exits_2(models, tmp_path):
    r = _kosti("eval", "--data", str(tmp_path / "nothing"), "--model", str(models["det_onnx"]))
    assert r.returncode == 2 and "nothing" in r.stderr
    (tmp_path / "d.yaml").write_text("train: images/train\n")
    r = _kosti("eval", "--data", str(tmp_path / "d.yaml"), "--split", "test", "--model", str(models["det_onnx"]))
    assert r.returncode == 2 and "split" in r.stderr


def test_fit_temperature_cli_and_library(models, dataset, tmp_path):
    from kosti.vision.evaluate import collect_face_probs, fit_temperature

    root, n_dice = dataset
    # The untrained detector's boxes never match a label: a clean exit-2 error, nothing written.
    out = tmp_path / "reader.json"
    r = _kosti("eval", "--data", str(root), "--model", str(models["det_onnx"]), "--cls-model",
               str(models["cls_onnx"]), "--no-map", "--json", "--fit-temperature", str(out))
    assert r.returncode == 2 and "no matched dice" in r.stderr and not out.exists()
    # On the labelled boxes the classifier's probabilities are collected with the true classes.
    reader = DiceReader(models["det_onnx"], models["cls_onnx"])
    ds = load_dataset(root, "test")
    probs, target = collect_face_probs(reader, ds, on_labels=True)
    assert probs.shape == (n_dice, 7) and target.shape == (n_dice,)
    truth = sorted(c for f in sorted((root / "labels" / "test").glob("*.txt"))
                   for c in read_labels(f, 640, 480, np.arange(6))[1].tolist())
    assert sorted(target.tolist()) == truth  # class index = face - 1 = YOLO label class here
    assert fit_temperature(probs, target) > 0


SKOVY = REPO.parent / "shared" / "datasets" / "skovy-webcam"


def _skovy_photos(n: int) -> list:
    photos = sorted((SKOVY / "images" / "test").glob("*.jpg"))[:n] if SKOVY.is_dir() else []
    if len(photos) < n:
        ci_guard.missing(f"needs the shared data set {SKOVY}")
    return photos


def _copy_photos(dest, photos, labels=True) -> None:
    import shutil

    img_dir = dest / "images"
    img_dir.mkdir(parents=True)
    for p in photos:
        shutil.copy(p, img_dir / p.name)
        if labels:
            (dest / "labels").mkdir(exist_ok=True)
            shutil.copy(SKOVY / "labels" / "test" / f"{p.stem}.txt", dest / "labels" / f"{p.stem}.txt")


def test_cli_eval_missing_split_is_refused_not_replaced(tmp_path):
    """A data.yaml without the asked split: exit 2 naming the split and the splits it has (never another
    split evaluated in its place)."""
    photos = _skovy_photos(1)
    _copy_photos(tmp_path / "v", photos)
    (tmp_path / "v" / "images" / "val").mkdir()
    (tmp_path / "v" / "images" / photos[0].name).rename(tmp_path / "v" / "images" / "val" / photos[0].name)
    (tmp_path / "v" / "labels" / "val").mkdir()
    (tmp_path / "v" / "labels" / f"{photos[0].stem}.txt").rename(tmp_path / "v" / "labels" / "val" /
                                                                  f"{photos[0].stem}.txt")
    (tmp_path / "v" / "data.yaml").write_text("path: .\ntrain: images/val\nval: images/val\n")
    r = _kosti("eval", "--data", str(tmp_path / "v" / "data.yaml"), "--split", "test", "--json")
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "'test'" in lines[0] and "train, val" in lines[0], r.stderr
    r = _kosti("eval", "--data", str(tmp_path / "v"), "--split", "test", "--json")  # folder form: images/val/ only
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "'test'" in r.stderr
    assert "val" in r.stderr.split("'test'", 1)[1]


def test_cli_eval_epanemu_has_no_test_split():
    data = REPO.parent / "shared" / "datasets" / "epanemu-dice" / "data.yaml"
    if not data.is_file():
        ci_guard.missing(f"needs the shared data set {data}")
    r = _kosti("eval", "--data", str(data), "--split", "test", "--json")
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.strip().splitlines()) == 1
    assert "'test'" in r.stderr and "train, val" in r.stderr


def test_cli_eval_needs_a_labels_folder(tmp_path):
    """images/ without labels/: exit 2 with a one-line reason, not all-zero metrics."""
    _copy_photos(tmp_path / "nolabels", _skovy_photos(2), labels=False)
    r = _kosti("eval", "--data", str(tmp_path / "nolabels"), "--json")
    assert r.returncode == 2 and r.stdout == "", r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "labels/" in lines[0], r.stderr
    # images/test/ with labels/ but no labels/test/: the same
    (tmp_path / "split" / "images" / "test").mkdir(parents=True)
    (tmp_path / "split" / "labels" / "train").mkdir(parents=True)
    for p in (tmp_path / "nolabels" / "images").iterdir():
        (tmp_path / "split" / "images" / "test" / p.name).write_bytes(p.read_bytes())
    r = _kosti("eval", "--data", str(tmp_path / "split"), "--json")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "labels" in r.stderr


def test_cli_eval_photo_without_label_file_has_no_dice(models, tmp_path):
    """A labels/ folder where one photo has no label file is legitimate: that photo shows no dice."""
    photos = _skovy_photos(2)
    _copy_photos(tmp_path / "ds", photos)
    (tmp_path / "ds" / "labels" / f"{photos[1].stem}.txt").unlink()
    n_dice = len([ln for ln in (SKOVY / "labels" / "test" / f"{photos[0].stem}.txt").read_text().splitlines()
                  if ln.strip()])
    r = _kosti("eval", "--data", str(tmp_path / "ds"), "--model", str(models["det_onnx"]), "--cls-model",
               str(models["cls_onnx"]), "--no-map", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["images"] == 2 and doc["dice"] == n_dice > 0


def test_a_fitted_reader_json_keeps_the_views_it_was_fitted_in(tmp_path):
    """``kosti eval --fit-temperature OUT.json`` writes the reader's views beside the temperature: placed as
    ``reader.json`` beside the shipped classifier (read upright), it must not switch it back to the four turns."""
    import json

    _copy_photos(tmp_path / "d", _skovy_photos(6))
    out = tmp_path / "reader.json"
    r = _kosti("eval", "--data", str(tmp_path / "d"), "--no-map", "--json", "--fit-temperature", str(out))
    assert r.returncode == 0, r.stderr
    shipped = json.loads((REPO / "models" / "reader.json").read_text())
    doc = json.loads(out.read_text())
    assert doc["views"] == shipped["views"] == "upright" and doc["temperature"] > 0
