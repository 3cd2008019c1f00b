"""Seeded synthetic scenes and crops (kosti.datasets.synth, ``kosti datasets synth``)."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import ci_guard
import cv2
import numpy as np
import pytest
import yaml

from kosti.cli import main as kosti_main
from kosti.datasets.synth import (
    CROP_CLASSES,
    REAL_SOURCES,
    RealBank,
    SceneGenerator,
    SynthConfig,
    SynthError,
    generate,
)
from kosti.vision.crops import CROP_SIZE
from kosti.vision.yolo_labels import read_labels

REAL_ROOT = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"

#: Rendered dice only (no shared photos needed), small images for speed.
FAST = SynthConfig(imgsz=256, real_frac=0.0, real_bg_frac=0.0, min_die=16, max_die=90)


def _real_data_or_skip() -> Path:
    if all((REAL_ROOT / name / "images" / split).is_dir() for name, split in REAL_SOURCES):
        return REAL_ROOT
    ci_guard.missing(f"shared dice photos not found under {REAL_ROOT}")


def _tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _read_labels(path: Path, imgsz: int) -> tuple[np.ndarray, np.ndarray]:
    """``(xyxy pixels, class)`` of a label file, with the one label reader (classes kept as indices)."""
    return read_labels(path, imgsz, imgsz, np.arange(6))


def _bright_blobs(img: np.ndarray, face: np.ndarray) -> int:
    """White blobs on the top face (its corner quad shrunk 15 %: side faces may show pips too)."""
    centre = face.mean(axis=0)
    inside = np.zeros(img.shape[:2], np.uint8)
    cv2.fillConvexPoly(inside, np.round(centre + (face - centre) * 0.85).astype(np.int32), 1)
    gray = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    n, _, stats, _ = cv2.connectedComponentsWithStats(((gray > 190) & (inside > 0)).astype(np.uint8), connectivity=8)
    return sum(1 for i in range(1, n) if stats[i, cv2.CC_STAT_AREA] >= 2)


def test_readable_dice_show_their_labelled_number_of_pips() -> None:
    # Clean scenes of black dice with white pips on a dark table: every readable die that overlaps no
    # other object must show exactly `value` bright blobs inside its labelled box.
    cfg = SynthConfig(imgsz=320, real_frac=0.0, real_bg_frac=0.0, min_die=28, max_die=110,
                      styles=("black_white",), backgrounds=("dark",), degrade=False)
    gen = SceneGenerator(cfg, None, seed=4)
    checked = 0
    for i in range(40):
        scene = gen.scene(i)
        others = [d.box for d in scene.dice] + scene.distractors
        for d in scene.dice:
            if not d.readable or d.visible < 0.999:
                continue
            if any(o is not d.box and _intersects(d.box, o) for o in others):
                continue
            assert d.face is not None and _inside_box(d.face, d.box)
            assert _bright_blobs(scene.image, d.face) == d.value, (i, d)
            checked += 1
    assert checked >= 40


def _inside_box(face: np.ndarray, box) -> bool:
    """The face's inner 85 % (the unrounded corners stick out of the rounded die) lies in the box."""
    centre = face.mean(axis=0)
    face = centre + (face - centre) * 0.85
    return bool(np.all(face >= np.array(box[:2]) - 1.5) and np.all(face <= np.array(box[2:]) + 1.5))


def _intersects(a, b) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def test_scene_labels_are_consistent_with_the_composited_dice() -> None:
    gen = SceneGenerator(FAST, None, seed=2)
    n_dice = n_hidden = 0
    for i in range(60):
        scene = gen.scene(i)
        assert scene.image.shape == (256, 256, 3) and scene.image.dtype == np.uint8
        labels = scene.detector_labels("die")
        assert len(labels) == sum(d.visible >= FAST.min_visible for d in scene.dice)
        n_dice += len(scene.dice)
        n_hidden += sum(d.visible < FAST.min_visible for d in scene.dice)
        for k, (x1, y1, x2, y2) in labels:
            assert k == 0
            assert 0 <= x1 < x2 <= 256 and 0 <= y1 < y2 <= 256
            assert x2 - x1 >= 4 and y2 - y1 >= 4
        for d in scene.dice:
            assert 1 <= d.value <= 6 and 0 < d.visible <= 1
        faces = scene.detector_labels("faces")
        assert [k for k, _ in faces] == [d.value - 1 for d in scene.dice if d.readable and d.visible >= 0.6]
    assert n_dice > 100 and n_hidden > 0  # occlusion and frame cuts really happen


def test_generate_writes_yolo_files_matching_the_scenes(tmp_path: Path) -> None:
    out = tmp_path / "det"
    summary = generate(out, 12, seed=5, cfg=replace(FAST, classes="faces"),
                       real_root=None, progress=False)
    data = yaml.safe_load((out / "data.yaml").read_text())
    assert data["names"] == {k: str(k + 1) for k in range(6)} and "path" not in data
    images = sorted((out / "images").rglob("*.jpg"))
    assert len(images) == 12 == summary.scenes
    gen = SceneGenerator(replace(FAST, classes="faces"), None, seed=5)
    total = 0
    for img_path in images:
        label = out / "labels" / img_path.parent.name / (img_path.stem + ".txt")
        boxes, classes = _read_labels(label, 256)
        index = int(img_path.stem.split("_")[-1])
        expected = gen.scene(index).detector_labels("faces")
        assert len(boxes) == len(expected)
        img = cv2.imread(str(img_path))
        assert img.shape == (256, 256, 3)
        for box, k_read, (k, want) in zip(boxes, classes, expected):
            assert k_read == k and 0 <= k <= 5
            assert np.all((box >= -1e-3) & (box <= 256 + 1e-3))
            np.testing.assert_allclose(box, want, atol=256 * 1e-6)  # 6-decimal normalised coordinates
        total += len(boxes)
    assert total == summary.labels > 0
    assert summary.per_split["train"] + summary.per_split["val"] == 12


def test_same_seed_gives_identical_files_and_another_seed_does_not(tmp_path: Path) -> None:
    generate(tmp_path / "a", 6, seed=11, cfg=FAST, real_root=None, progress=False)
    generate(tmp_path / "b", 6, seed=11, cfg=FAST, real_root=None, progress=False, workers=2)
    generate(tmp_path / "c", 6, seed=12, cfg=FAST, real_root=None, progress=False)
    a, b, c = (_tree_digest(tmp_path / x) for x in "abc")
    assert a == b
    assert a != c


def test_negatives_have_empty_label_files(tmp_path: Path) -> None:
    cfg = replace(FAST, neg_frac=1.0)
    generate(tmp_path, 8, seed=3, cfg=cfg, real_root=None, progress=False)
    labels = sorted((tmp_path / "labels").rglob("*.txt"))
    assert len(labels) == 8
    assert all(p.read_text() == "" for p in labels)
    gen = SceneGenerator(cfg, None, 3)
    assert all(not gen.scene(i).dice and gen.scene(i).distractors for i in range(8))


def test_crops_mode_writes_all_seven_classes(tmp_path: Path) -> None:
    summary = generate(tmp_path, 160, seed=7, cfg=FAST, crops=True, real_root=None, progress=False)
    assert sum(summary.per_class.values()) == 160
    for c in CROP_CLASSES:
        files = sorted((tmp_path / "train" / c).glob("*.png"))
        assert files, f"no crops of class {c}"
        assert (tmp_path / "val" / c).is_dir()
        crop = cv2.imread(str(files[0]))
        assert crop.shape == (CROP_SIZE, CROP_SIZE, 3)
    assert not (tmp_path / "ATTRIBUTION.md").exists()  # no real photos used


def test_refuses_to_overwrite_foreign_folders(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("precious")
    with pytest.raises(SynthError, match="not empty"):
        generate(tmp_path, 2, cfg=FAST, real_root=None, progress=False)
    with pytest.raises(SynthError, match="not made by"):
        generate(tmp_path, 2, cfg=FAST, real_root=None, progress=False, overwrite=True)
    assert (tmp_path / "keep.txt").read_text() == "precious"


def _lean(cfg: SynthConfig, n: int = 30) -> float:
    """Median ratio of a fully visible rendered die's box area to its top face's area."""
    gen = SceneGenerator(cfg, None, seed=6)
    ratios = []
    for i in range(n):
        for d in gen.scene(i).dice:
            if d.face is not None and d.visible > 0.99:
                box_area = (d.box[2] - d.box[0]) * (d.box[3] - d.box[1])
                ratios.append(box_area / cv2.contourArea(d.face.astype(np.float32)))
    assert len(ratios) >= 20
    return float(np.median(ratios))


def test_oblique_scenes_show_side_faces_and_leave_other_seeds_alone() -> None:
    clean = replace(FAST, imgsz=320, degrade=False, min_die=30)
    top_down, oblique = _lean(clean), _lean(replace(clean, oblique_frac=1.0))
    # Side faces widen the die's box around the same top face (a rotated square alone gives ~1.0-2.0).
    assert oblique > top_down * 1.15, (top_down, oblique)
    # oblique_frac = 0 draws nothing extra: the scene's dice are the ones the generator made for this
    # seed before the setting existed (taken with that version), so old datasets rebuild the same.
    dice = [(d.value, tuple(round(v) for v in d.box)) for d in SceneGenerator(FAST, None, seed=9).scene(3).dice]
    assert dice == [(1, (150, 19, 220, 82)), (5, (16, 88, 82, 147)), (5, (0, 0, 60, 65)), (4, (103, 179, 180, 244)),
                    (2, (0, 174, 38, 224))]
    with pytest.raises(SynthError, match="oblique_frac"):
        SynthConfig(oblique_frac=1.5).check()


def test_wide_scenes_add_hard_negatives_without_labels_and_leave_other_seeds_alone() -> None:
    wide = replace(FAST, wide=True, neg_frac=0.5)
    gen = SceneGenerator(wide, None, seed=4)
    scenes = [gen.scene(i) for i in range(40)]
    assert [s.image.tobytes() for s in scenes[:3]] == [gen.scene(i).image.tobytes() for i in range(3)]
    negatives = [s for s in scenes if not s.dice]
    assert negatives and all(s.distractors for s in negatives)  # tokens, dominoes… are never labelled dice
    for s in scenes:
        for d in s.dice:
            assert 1 <= d.value <= 6
    # The wide generator draws from its own stream only when on: the default scene is unchanged.
    dice = [(d.value, tuple(round(v) for v in d.box)) for d in SceneGenerator(FAST, None, seed=9).scene(3).dice]
    assert dice == [(1, (150, 19, 220, 82)), (5, (16, 88, 82, 147)), (5, (0, 0, 60, 65)), (4, (103, 179, 180, 244)),
                    (2, (0, 174, 38, 224))]
    assert SceneGenerator(FAST, None, seed=9).scene(3).image.tobytes() != SceneGenerator(
        replace(FAST, wide=True), None, seed=9).scene(3).image.tobytes()
    # Every hard negative renders as a visible sprite.
    from kosti.datasets.synth_sprites import _WIDE_CLUTTER_KINDS, _clutter_sprite

    for i, kind in enumerate(_WIDE_CLUTTER_KINDS):
        sp = _clutter_sprite(kind, 80.0, np.random.default_rng(i), 30.0)
        assert sp.value == -1 and sp.kind == "clutter" and sp.sil.sum() > 40, kind
    with pytest.raises(SynthError, match="unknown background"):
        SynthConfig(backgrounds=("board",)).check()
    replace(FAST, wide=True, backgrounds=("board", "quilt", "carpet")).check()


def test_bad_settings_are_rejected() -> None:
    with pytest.raises(SynthError):
        SynthConfig(classes="pips").check()
    with pytest.raises(SynthError):
        SynthConfig(styles=("plaid",)).check()
    with pytest.raises(SynthError):
        SceneGenerator(SynthConfig(), None, 0)  # real crops asked for, none loaded


def test_cli_synth_is_reproducible_and_reports_bad_input(tmp_path: Path, capsys) -> None:
    args = ["datasets", "synth", "--n", "3", "--seed", "9", "--imgsz", "128", "--real-frac", "0",
            "--real-bg-frac", "0", "--no-progress", "--style", "ivory"]
    assert kosti_main(args + ["--out", str(tmp_path / "x")]) == 0
    assert kosti_main(args + ["--out", str(tmp_path / "y")]) == 0
    assert _tree_digest(tmp_path / "x") == _tree_digest(tmp_path / "y")
    assert "wrote 3 scenes" in capsys.readouterr().out
    assert kosti_main(args + ["--out", str(tmp_path / "x")]) == 2  # not empty
    assert "not empty" in capsys.readouterr().err
    assert kosti_main(args + ["--out", str(tmp_path / "x"), "--overwrite"]) == 0


def test_real_training_crops_are_cut_and_used(tmp_path: Path) -> None:
    root = _real_data_or_skip()
    bank = RealBank.load(root, limit=4)
    assert len(bank.crops) > 8
    assert {c.value for c in bank.crops} <= set(range(1, 7))
    assert all(c.bgra.shape[2] == 4 and c.sil.any() for c in bank.crops)
    sources = {p.parent.parent.parent.name + "/" + p.parent.name for p, _ in bank.backgrounds}
    assert sources == {f"{a}/{b}" for a, b in REAL_SOURCES}  # training splits only
    cfg = SynthConfig(imgsz=192, real_frac=1.0, real_bg_frac=0.5)
    summary = generate(tmp_path, 4, seed=1, cfg=cfg, real_root=root, real_limit=4, progress=False)
    assert summary.scenes == 4
    assert "CC BY 4.0" in (tmp_path / "ATTRIBUTION.md").read_text()
    assert "Copyright (c) 2019, Nell Byler" in (tmp_path / "ATTRIBUTION.md").read_text()


def test_a_malformed_real_label_stops_the_bank_naming_file_and_line(tmp_path: Path) -> None:
    """Real training photos are read with the evaluator's label parser: a bad line is an error that says
    where, not a die silently dropped from the training data."""
    for name, split in REAL_SOURCES:
        (tmp_path / name / "images" / split).mkdir(parents=True)
        (tmp_path / name / "labels" / split).mkdir(parents=True)
        cv2.imwrite(str(tmp_path / name / "images" / split / "a.jpg"), np.full((64, 64, 3), 200, np.uint8))
        (tmp_path / name / "labels" / split / "a.txt").write_text("2 0.5 0.5 0.4 0.4\n")
    bad = tmp_path / REAL_SOURCES[-1][0] / "labels" / REAL_SOURCES[-1][1] / "a.txt"
    bad.write_text("2 0.5 0.5 0.4 0.4\n7 0.5 0.5\n")
    with pytest.raises(SynthError, match=r"a\.txt:2"):
        RealBank.load(tmp_path)
