"""Capture folders (``kosti.datasets.capture``): writer round-trip, exact YOLO lines, atomic writes, review
state, corrections from play, compatibility with the training/eval readers, and ``kosti capture`` over
real photos."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import ci_guard
import cv2
import numpy as np
import pytest

from kosti.datasets import capture as cap
from kosti.datasets import capture_cli
from kosti.datasets.prepare import label_path, read_labels, split_images

REPO = Path(__file__).resolve().parents[2]
BYLER_TEST = REPO.parent / "shared" / "datasets" / "byler-d6" / "images" / "test"
DETECTOR = REPO / "models" / "dice_det.onnx"
CLASSIFIER = REPO / "models" / "dice_cls.onnx"


def faces(rec: cap.CaptureRecord) -> list[tuple[int, bool]]:
    """``(label face, unread by the model)`` per die of a capture record."""
    return list(zip(rec.dice.best_faces.tolist(), rec.dice.uncertain.tolist()))


def frame(w: int = 640, h: int = 480, seed: int = 0) -> np.ndarray:
    """A textured BGR frame (random blocks, so JPEG round-trips are not trivial)."""
    rng = np.random.default_rng(seed)
    small = rng.integers(0, 255, (h // 16, w // 16, 3), dtype=np.uint8)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_NEAREST)


DICE = [(5, (10.0, 20.0, 50.0, 60.0), 0.91), (1, (300.5, 100.25, 341.0, 139.75), 0.77), (6, (600.0, 440.0, 640.0, 480.0), 0.66)]


def test_writer_round_trip_exact_yolo_lines(tmp_path: Path) -> None:
    w = cap.CaptureWriter(tmp_path / "cap", model="v7")
    image_id = w.add(frame(), DICE)
    lines = (tmp_path / "cap" / "labels" / f"{image_id}.txt").read_text().splitlines()
    # class = face - 1; centre and size normalised by 640 x 480, six decimals.
    assert lines == [
        "4 0.046875 0.083333 0.062500 0.083333",
        "0 0.501172 0.250000 0.063281 0.082292",  # (300.5+341)/2/640, 120/480, 40.5/640, 39.5/480
        "5 0.968750 0.958333 0.062500 0.083333",
    ]
    rec = cap.load(tmp_path / "cap", image_id)
    assert (rec.width, rec.height) == (640, 480)
    assert rec.image is not None and rec.image.shape == (480, 640, 3)
    assert faces(rec) == [(5, False), (1, False), (6, False)]
    assert rec.dice.value.tolist() == [5, 1, 6]
    for box, conf, (_, want_box, want_conf) in zip(rec.dice.xyxy, rec.dice.value_confidence, DICE):
        np.testing.assert_allclose(box, want_box, atol=640 * 1e-6)  # 6-decimal rounding of normalised coords
        assert conf == pytest.approx(want_conf, abs=1e-4)
    assert not rec.reviewed and rec.source == "capture" and rec.meta["model"] == "v7"
    assert rec.meta["proposed"][0] == {"value": 5, "confidence": 0.91, "uncertain": False}
    # The JPEG is the frame (quality 95: small error only).
    assert np.abs(rec.image.astype(int) - frame().astype(int)).mean() < 6


def test_uncertain_die_written_with_guess_and_left_unreviewed(tmp_path: Path) -> None:
    w = cap.CaptureWriter(tmp_path)
    image_id = w.add(frame(), [(0, (10, 20, 50, 60), 0.31, 3), (2, (100, 100, 140, 140), 0.9)], reviewed=True)
    assert (tmp_path / "labels" / f"{image_id}.txt").read_text().splitlines()[0].startswith("2 ")
    rec = cap.load(tmp_path, image_id, with_image=False)
    assert faces(rec) == [(3, True), (2, False)]
    assert rec.dice.value.tolist() == [0, 2] and rec.dice.data["guess"].tolist() == [3, 0]
    assert rec.reviewed is False  # an uncertain die forces review even when reviewed=True was asked
    # No guess: refused with a clear error, nothing written.
    with pytest.raises(cap.CaptureError, match="1–6"):
        w.add(frame(), [(0, (10, 20, 50, 60), 0.2)])
    assert cap.stats(tmp_path)["images"] == 1


def test_pipeline_die_objects_are_accepted(tmp_path: Path) -> None:
    from kosti.vision.pipeline import Die

    dice = [Die(4, 0.95, (10, 10, 40, 40)), Die(0, 0.2, (60, 10, 90, 40), uncertain=True, guess=6)]
    image_id = cap.CaptureWriter(tmp_path).add(frame(), dice)
    rec = cap.load(tmp_path, image_id, with_image=False)
    assert faces(rec) == [(4, False), (6, True)]


@pytest.mark.parametrize("bad, match", [
    ([(7, (10, 10, 40, 40), 0.9)], "1–6"),
    ([(3, (10, 10, 700, 40), 0.9)], "outside the 640×480 image"),
    ([(3, (40, 10, 10, 40), 0.9)], "empty"),
    ([(3, (10, 10, float("nan"), 40), 0.9)], "finite"),
    ([(3, (10, 10, 40), 0.9)], "4 finite numbers"),
])
def test_bad_dice_refused_and_nothing_written(tmp_path: Path, bad, match) -> None:
    w = cap.CaptureWriter(tmp_path)
    with pytest.raises(cap.CaptureError, match=match):
        w.add(frame(), bad)
    assert list((tmp_path / "images").iterdir()) == []
    assert list((tmp_path / "labels").iterdir()) == []
    assert cap.read_review(tmp_path)["images"] == {}


def test_boxes_overhanging_by_a_pixel_are_clipped(tmp_path: Path) -> None:
    image_id = cap.CaptureWriter(tmp_path).add(frame(), [(2, (-0.6, 10, 40, 480.8), 0.9)])
    rec = cap.load(tmp_path, image_id, with_image=False)
    np.testing.assert_allclose(rec.dice.xyxy[0], (0, 10, 40, 480), atol=1e-3)


def test_folder_is_a_training_and_eval_dataset(tmp_path: Path) -> None:
    w = cap.CaptureWriter(tmp_path)
    ids = [w.add(frame(seed=i), DICE[: i + 1]) for i in range(3)]
    images = split_images(tmp_path, "train")
    assert [p.stem for p in images] == sorted(ids)
    for img, n in zip(images, (1, 2, 3)):
        assert label_path(img) == tmp_path / "labels" / f"{img.stem}.txt"
        boxes, values = read_labels(img, 640, 480)
        assert values.tolist() == [d[0] for d in DICE[:n]]
        np.testing.assert_allclose(boxes, [d[1] for d in DICE[:n]], atol=640 * 1e-6)
    from kosti.vision.evaluate import load_dataset

    ds = load_dataset(tmp_path, "test")  # what `kosti eval --data DIR` reads
    assert len(ds.items) == 3
    assert ds.class_values.tolist()[:6] == [1, 2, 3, 4, 5, 6]


def test_folder_feeds_the_training_set_builders(tmp_path: Path) -> None:
    """What ``kosti train --data DIR`` does first: the one-class detector set and the face crops."""
    from kosti.datasets.prepare import prepare_classification, prepare_detection

    w = cap.CaptureWriter(tmp_path / "cap")
    for i in range(2):
        w.add(frame(seed=i), DICE)
    assert prepare_detection([(tmp_path / "cap", "train")], tmp_path / "det", "train") == 2
    det_labels = sorted((tmp_path / "det" / "labels" / "train").iterdir())
    assert [line.split()[0] for line in det_labels[0].read_text().splitlines()] == ["0", "0", "0"]
    counts = prepare_classification([(tmp_path / "cap", "train")], tmp_path / "cls", "train", per_die=2)
    assert {k: counts[k] for k in ("1", "5", "6")} == {"1": 4, "5": 4, "6": 4}  # 2 images x 2 crops per die
    assert counts["2"] == counts["3"] == counts["4"] == 0


def test_save_labels_review_and_stats(tmp_path: Path) -> None:
    w = cap.CaptureWriter(tmp_path)
    a = w.add(frame(), DICE[:2])
    b = w.add(frame(seed=1), DICE[:1])
    assert cap.stats(tmp_path) == {"images": 2, "reviewed": 0, "unreviewed": 2, "dice": 3, "reviewed_dice": 0,
                                   "corrections": 0, "faces": {"1": 1, "2": 0, "3": 0, "4": 0, "5": 2, "6": 0}}
    rec = cap.save_labels(tmp_path, a, [(6, (10, 20, 50, 60)), (2, (100, 100, 150, 140)), (3, (200, 200, 240, 240))])
    assert rec.reviewed and rec.meta["edited"] and rec.meta["reviewed_at"]
    assert faces(rec) == [(6, False), (2, False), (3, False)]
    assert np.isnan(rec.dice.value_confidence).all()  # confidences belong to the model's proposal only
    assert [d["confidence"] for d in rec.to_dict()["dice"]] == [None, None, None]
    s = cap.stats(tmp_path)
    assert (s["images"], s["reviewed"], s["unreviewed"], s["dice"], s["reviewed_dice"]) == (2, 1, 1, 4, 3)
    assert s["faces"] == {"1": 0, "2": 1, "3": 1, "4": 0, "5": 1, "6": 1}
    # Confirm without edits keeps the proposal and its confidences.
    rec_b = cap.set_reviewed(tmp_path, b)
    assert rec_b.reviewed and not rec_b.meta["edited"] and rec_b.dice.value_confidence[0] == pytest.approx(0.91)
    assert cap.stats(tmp_path)["reviewed"] == 2
    cap.set_reviewed(tmp_path, b, False)
    assert cap.stats(tmp_path)["reviewed"] == 1
    # Bad labels: refused, file unchanged.
    before = (tmp_path / "labels" / f"{a}.txt").read_bytes()
    for bad in ([(0, (1, 1, 5, 5))], [(7, (1, 1, 5, 5))], [(3, (1, 1, 5, 900))]):
        with pytest.raises(cap.CaptureError):
            cap.save_labels(tmp_path, a, bad)
    assert (tmp_path / "labels" / f"{a}.txt").read_bytes() == before
    with pytest.raises(cap.CaptureError, match="no image"):
        cap.load(tmp_path, "20990101-000000-000")
    with pytest.raises(cap.CaptureError, match="invalid image id"):
        cap.load(tmp_path, "../review")


def test_empty_throw_gives_an_empty_label_file(tmp_path: Path) -> None:
    image_id = cap.CaptureWriter(tmp_path).add(frame(), [])
    assert (tmp_path / "labels" / f"{image_id}.txt").read_text() == ""
    assert len(cap.load(tmp_path, image_id, with_image=False).dice) == 0


def test_corrections_from_play_are_recorded(tmp_path: Path) -> None:
    from kosti.dashboard.table import TableDie

    ok, buf = cv2.imencode(".jpg", frame(), [cv2.IMWRITE_JPEG_QUALITY, 85])
    jpeg = buf.tobytes()
    # Player fixed die 1 to a 4 (was read uncertain); every die has a box → reviewed, JPEG kept byte for byte.
    fixed = [TableDie(5, 0.9, [10, 20, 50, 60]), TableDie(4, 0.3, [100, 100, 140, 140], uncertain=True)]
    a = cap.save_correction(tmp_path, jpeg, fixed, model="v3")
    rec = cap.load(tmp_path, a, with_image=False)
    assert rec.source == "correction" and rec.reviewed and rec.meta["model"] == "v3"
    assert faces(rec) == [(5, False), (4, False)]
    assert rec.path.read_bytes() == jpeg
    # A die the player added by hand has no box: saved without it, left for the review page with a note.
    b = cap.save_correction(tmp_path, frame(), [TableDie(2, 0.9, [10, 20, 50, 60]), {"value": 3, "box": None}])
    rec_b = cap.load(tmp_path, b, with_image=False)
    assert not rec_b.reviewed and faces(rec_b) == [(2, False)]
    assert "1 dice have no box" in rec_b.meta["note"]
    # A die still unread when the throw is saved: left out with a note, image unreviewed.
    c = cap.save_correction(tmp_path, frame(), [TableDie(0, 0.2, [10, 20, 50, 60], uncertain=True),
                                                TableDie(6, 0.9, [100, 100, 140, 140])])
    rec_c = cap.load(tmp_path, c, with_image=False)
    assert not rec_c.reviewed and faces(rec_c) == [(6, False)] and "1 dice were not read" in rec_c.meta["note"]
    with pytest.raises(cap.CaptureError, match="outside"):
        cap.save_correction(tmp_path, frame(), [TableDie(6, 0.9, [100, 100, 900, 140])])
    s = cap.stats(tmp_path)
    assert (s["corrections"], s["reviewed"]) == (3, 1)
    # The same throw corrected twice (stable key): one image, the latest faces.
    k1 = cap.save_correction(tmp_path, jpeg, [(5, [10, 20, 50, 60]), (1, [100, 100, 140, 140])], key="game3-throw17")
    k2 = cap.save_correction(tmp_path, jpeg, [(5, [10, 20, 50, 60]), (2, [100, 100, 140, 140])], key="game3-throw17")
    assert k1 == k2 == "game3-throw17"
    assert cap.load(tmp_path, k2, with_image=False).dice.value.tolist() == [5, 2]
    assert cap.stats(tmp_path)["corrections"] == 4
    with pytest.raises(cap.CaptureError, match="invalid image id"):
        cap.save_correction(tmp_path, jpeg, [(5, [10, 20, 50, 60])], key="../x")


def test_writes_are_atomic_and_failures_leave_nothing(tmp_path: Path, monkeypatch) -> None:
    w = cap.CaptureWriter(tmp_path)
    first = w.add(frame(), DICE[:1])
    label = tmp_path / "labels" / f"{first}.txt"
    old = label.read_bytes()
    # Every file goes through a temp file + os.replace in the same folder.
    replaced: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy(src, dst):
        replaced.append((str(src), str(dst)))
        return real_replace(src, dst)

    monkeypatch.setattr(cap.os, "replace", spy)
    second = w.add(frame(seed=2), DICE[:2])
    targets = [Path(d).name for _, d in replaced]
    assert targets == [f"{second}.txt", "review.json", f"{second}.jpg"]  # labels before the image
    assert all(Path(s).parent == Path(d).parent and Path(s).name.startswith(".") for s, d in replaced)

    # A crash while replacing the label file: the old labels stay whole, no temp file is left behind.
    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(cap.os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        cap.save_labels(tmp_path, first, [(1, (1, 1, 30, 30))])
    assert label.read_bytes() == old
    leftovers = [p.name for d in ("images", "labels", ".") for p in (tmp_path / d).iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []
    monkeypatch.setattr(cap.os, "replace", real_replace)
    assert cap.load(tmp_path, first, with_image=False).dice.value[0] == DICE[0][0]


def test_concurrent_writers_get_unique_ids_and_a_consistent_index(tmp_path: Path) -> None:
    ids: list[str] = []
    lock = threading.Lock()

    def work(seed: int) -> None:
        w = cap.CaptureWriter(tmp_path)
        for k in range(5):
            i = w.add(frame(seed=seed), DICE[: 1 + k % 3])
            with lock:
                ids.append(i)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ids) == len(set(ids)) == 20
    index = cap.read_review(tmp_path)["images"]
    assert sorted(index) == sorted(ids) == cap.list_ids(tmp_path)
    assert cap.stats(tmp_path)["images"] == 20


def test_unreadable_review_index_is_never_overwritten(tmp_path: Path) -> None:
    w = cap.CaptureWriter(tmp_path)
    w.add(frame(), DICE[:1])
    (tmp_path / "review.json").write_text("{not json")
    with pytest.raises(cap.CaptureError, match="unreadable review index"):
        w.add(frame(), DICE[:1])
    assert (tmp_path / "review.json").read_text() == "{not json"


def test_images_without_index_entries_are_listed_as_imports(tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    (tmp_path / "labels").mkdir()
    cv2.imwrite(str(tmp_path / "images" / "IMG_1.jpg"), frame())
    (tmp_path / "labels" / "IMG_1.txt").write_text("2 0.5 0.5 0.1 0.1\n")
    [item] = cap.list_images(tmp_path)
    assert item["id"] == "IMG_1" and item["source"] == "import" and item["dice"] == 1 and not item["reviewed"]
    rec = cap.save_labels(tmp_path, "IMG_1", [(3, (288, 216, 352, 264))])
    assert rec.reviewed and rec.dice.value.tolist() == [3]


def test_link_reviewed_subset(tmp_path: Path) -> None:
    w = cap.CaptureWriter(tmp_path / "cap")
    a = w.add(frame(), DICE[:1])
    w.add(frame(seed=1), DICE[:2])
    cap.set_reviewed(tmp_path / "cap", a)
    n = cap.link_reviewed(tmp_path / "cap", tmp_path / "reviewed")
    assert n == 1
    [img] = split_images(tmp_path / "reviewed", "train")
    assert img.stem == a and img.is_symlink()
    assert read_labels(img, 640, 480)[1].tolist() == [5]


# -- kosti capture ------------------------------------------------------------------------------------
def test_capture_cli_rejects_bad_input(tmp_path: Path, capsys) -> None:
    from kosti.cli import main

    assert main(["capture", "--source", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2
    assert "unknown source" in capsys.readouterr().err
    assert main(["capture", "--source", "virtual", "--out", str(tmp_path / "o"), "--max", "0"]) == 2
    assert "--max must be >= 1" in capsys.readouterr().err
    photos = tmp_path / "p"
    photos.mkdir()
    cv2.imwrite(str(photos / "a.png"), frame())
    rc = main(["capture", "--source", str(photos), "--out", str(tmp_path / "o"), "--model", str(tmp_path / "no.onnx")])
    assert rc == 2 and "no.onnx" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()  # nothing is created before the reader loads


def _photos_with_1_to_5_dice(n: int) -> list[Path]:
    if not BYLER_TEST.is_dir():
        ci_guard.missing(f"shared dataset not found: {BYLER_TEST}")
    out = []
    for img in sorted(BYLER_TEST.iterdir()):
        lab = label_path(img)
        k = sum(1 for line in lab.read_text().splitlines() if line.strip()) if lab.exists() else 0
        if 1 <= k <= 5:
            out.append(img)
        if len(out) == n:
            break
    assert len(out) == n, "byler-d6 test split has too few photos with 1–5 dice"
    return out


def test_capture_cli_over_real_photos(tmp_path: Path, capsys) -> None:
    """``kosti capture --max 2`` over a folder of real photos saves exactly what the reader proposes."""
    photos = _photos_with_1_to_5_dice(3)
    ci_guard.shipped(DETECTOR, "shipped detector")
    ci_guard.shipped(CLASSIFIER, "shipped face classifier")
    from kosti.cli import main
    from kosti.vision.reader import DiceReader

    src = tmp_path / "src"
    src.mkdir()
    for i, p in enumerate(photos):
        os.symlink(p, src / f"{i:02d}_{p.name}")
    out = tmp_path / "cap"
    rc = main(["capture", "--source", str(src), "--out", str(out), "--max", "2", "--json",
               "--model", str(DETECTOR), "--cls-model", str(CLASSIFIER)])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["saved"] == 2 and len(summary["ids"]) == 2
    assert summary["stats"]["images"] == 2 and summary["stats"]["reviewed"] == 0
    items = split_images(out, "train")
    assert [p.stem for p in items] == sorted(summary["ids"])
    # Each photo is held still, so the pipeline's vote equals one read of the photo: the saved labels are
    # the reader's dice (left to right), unread ones with the classifier's best face and flagged uncertain.
    reader = DiceReader(det_path=DETECTOR, cls_path=CLASSIFIER)
    frames = [cv2.imread(str(p)) for p in photos]
    reads = [(f, reader.read(f)) for f in frames]
    expected = [(f, det) for f, det in reads if len(det)][:2]  # an empty tray is not a throw
    for img, (f, det) in zip(items, expected):
        rec = cap.load(out, img.stem)
        assert rec.image.shape == f.shape and rec.meta["source"] == "capture" and rec.meta["model"]
        assert rec.meta["throw"]["status"] in ("ok", "uncertain")
        order = sorted(range(len(det)), key=lambda i: ((det.xyxy[i, 0] + det.xyxy[i, 2]) / 2, (det.xyxy[i, 1] + det.xyxy[i, 3]) / 2))
        assert len(rec.dice) == len(det)
        boxes = det.xyxy[order]
        np.testing.assert_allclose(rec.dice.xyxy, boxes, atol=0.01)
        guesses = capture_cli.guess_faces(reader, f, boxes)
        for got, i, g in zip(faces(rec), order, guesses):
            v = int(det.value[i])
            assert got == ((v, False) if v else (int(g), True))


class _FakeReader:
    """Stands in for DiceReader: one die per photo at a place and face encoded in the photo's colour, and
    a second die the "classifier" cannot read (value 0) whose best face class is 6."""

    class _Cls:
        names = {0: "1", 1: "2", 2: "3", 3: "4", 4: "5", 5: "6", 6: "x"}

        def classify(self, crops: np.ndarray) -> np.ndarray:
            p = np.full((len(crops), 7), 0.05, np.float32)
            p[:, 5] = 0.4   # face 6 is the best face…
            p[:, 6] = 0.45  # …but "x" (unreadable) wins overall
            return p

    classifier = _Cls()

    def face_probs(self, crops: np.ndarray) -> np.ndarray:
        return self.classifier.classify(crops)

    def crops(self, image: np.ndarray, xyxy: np.ndarray) -> np.ndarray:
        return np.zeros((len(xyxy), 64, 64, 3), np.uint8)

    def describe(self) -> str:
        return "fake reader"

    def read(self, image: np.ndarray):
        from kosti.vision.detections import Detections

        k = int(image[0, 0, 2]) // 40  # photo number 0..5 in the red channel
        x = 20.0 + 40 * k
        return Detections(np.array([[x, 40, x + 30, 70], [200, 150, 230, 180]], np.float32), np.array([0.9, 0.8]),
                          np.array([k + 1, 0]), np.array([0.95, 0.4]))


def test_capture_loop_saves_each_settled_throw(tmp_path: Path, monkeypatch, capsys) -> None:
    from kosti.cli import main

    src = tmp_path / "photos"
    src.mkdir()
    for k in range(4):
        img = np.full((240, 320, 3), 90, np.uint8)
        img[0, 0, 2] = 40 * k + 5
        cv2.imwrite(str(src / f"{k:02d}.png"), img)
    monkeypatch.setattr(capture_cli, "_open_reader", lambda args: (_FakeReader(), "fake reader"))
    out = tmp_path / "cap"
    assert main(["capture", "--source", str(src), "--out", str(out), "--max", "3", "--still-time", "0.3"]) == 0
    printed = capsys.readouterr().out
    assert "[3]" in printed and "[4]" not in printed
    ids = cap.list_ids(out)
    assert len(ids) == 3  # --max 3 of the 4 photos
    for k, image_id in enumerate(ids):
        rec = cap.load(out, image_id)
        assert rec.image.shape == (240, 320, 3) and rec.meta["model"] == "fake reader"
        # Read die: face k+1; unread die: the classifier's best face (6), flagged uncertain.
        assert faces(rec) == [(k + 1, False), (6, True)]
        assert rec.dice.xyxy[0].tolist() == pytest.approx((20 + 40 * k, 40, 50 + 40 * k, 70), abs=0.01)
        assert not rec.reviewed
    # A folder of photos: each image keeps its source photo's name (id and review.json).
    assert ids == ["00", "01", "02"]
    assert [cap.load(out, i).meta["throw"]["source_file"] for i in ids] == ["00.png", "01.png", "02.png"]
    # The whole folder without --max: the 4 photos, appended after the first 3 (taken names get -2).
    assert main(["capture", "--source", str(src), "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["saved"] == 4 and summary["stats"]["images"] == 7 and summary["stats"]["dice"] == 14
    assert sorted(summary["ids"]) == ["00-2", "01-2", "02-2", "03"]


def test_default_capture_dir_is_the_configured_frames_folder(tmp_path: Path, monkeypatch) -> None:
    # tests/conftest.py's empty $KOSTI_CONFIG hides /etc/kosti/kosti.toml and ~/.config, so this runs anywhere
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("KOSTI_STORAGE__DIR", str(tmp_path / "data"))
    from kosti.datasets.capture_cli import default_capture_dir

    assert default_capture_dir() == tmp_path / "data" / "frames"
    monkeypatch.setenv("KOSTI_STORAGE__FRAMES_DIR", "caps")
    assert default_capture_dir() == tmp_path / "data" / "caps"


def test_writer_takes_detections_as_they_flow(tmp_path: Path) -> None:
    """A throw's Detections go in as they are: read faces as values, an unread die by its guess column."""
    from kosti.vision.detections import Detections

    dets = Detections(np.array([[10, 20, 50, 60], [100, 100, 140, 140]]), [0.9, 0.8], [4, 0], [0.95, 0.3],
                      {"guess": [0, 2]})
    image_id = cap.CaptureWriter(tmp_path).add(frame(), dets, reviewed=True)
    rec = cap.load(tmp_path, image_id, with_image=False)
    assert faces(rec) == [(4, False), (2, True)] and not rec.reviewed  # an unread die leaves it for review
    assert [line.split()[0] for line in (tmp_path / "labels" / f"{image_id}.txt").read_text().splitlines()] == ["3", "1"]
    with pytest.raises(cap.CaptureError, match="1–6"):
        cap.CaptureWriter(tmp_path).add(frame(), dets.with_data(guess=[0, 0]))
    assert len(cap.list_ids(tmp_path)) == 1  # nothing written for the refused throw


def test_capture_turns_a_camera_as_the_table_does(tmp_path: Path, monkeypatch, capsys) -> None:
    """``kosti capture`` turns a camera's frames by ``--rotate``, else by the config's ``source.rotate`` (the dice
    taught are seen as ``kosti run`` will read them); files and folders by ``--rotate`` only."""
    import argparse

    from kosti.datasets.capture_cli import _rotation

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("KOSTI_SOURCE__ROTATE", "90")
    photos = tmp_path / "photos"
    photos.mkdir()
    ns = argparse.Namespace
    assert _rotation(ns(source="rtsp://cam.local/s", rotate=None)) == 90
    assert _rotation(ns(source="rtsp://cam.local/s", rotate=180)) == 180
    assert _rotation(ns(source=str(photos), rotate=None)) == 0
    assert _rotation(ns(source=str(photos), rotate=270)) == 270
    monkeypatch.delenv("KOSTI_SOURCE__ROTATE")
    assert _rotation(ns(source="rtsp://cam.local/s", rotate=None)) == 0
    assert _rotation(ns(source="virtual", rotate=None)) == 0
    from kosti.cli import main

    assert main(["capture", "--source", "virtual", "--rotate", "90", "--out", str(tmp_path / "o"), "--max", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "virtual table is never turned" in err and len(err.splitlines()) == 1


def test_capture_says_when_the_picture_is_the_wrong_way_up(tmp_path: Path, capsys) -> None:
    """Photos taken from a seat, turned upside down (an angled camera mounted so), would teach side faces:
    ``kosti capture`` says so once and names the turn (``--rotate 180``), also in its JSON summary."""
    shared = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "epanemu-dice"
    if not (shared / "images" / "val").is_dir():
        ci_guard.missing(f"shared dataset missing: {shared}")
    ci_guard.shipped(DETECTOR, "shipped detector")
    ci_guard.shipped(CLASSIFIER, "shipped face classifier")
    from kosti.cli import main
    from kosti.vision.evaluate import load_dataset, read_labels
    from kosti.vision.orientation import perspective_slopes

    ds = load_dataset(shared, "val")
    src = tmp_path / "src"
    src.mkdir()
    n = 0
    for item in ds.items:  # photos whose labelled dice clearly shrink towards the top: a seat's view
        img = cv2.imread(str(item.image))
        xy, _ = read_labels(item.label, img.shape[1], img.shape[0], ds.class_values)
        slopes = perspective_slopes(xy, img.shape[1], img.shape[0]) if len(xy) >= 3 else None
        if slopes is not None and slopes[1] > 0.3:
            cv2.imwrite(str(src / f"{n:02d}.png"), cv2.rotate(img, cv2.ROTATE_180))
            n += 1
    assert n >= 8
    assert main(["capture", "--source", str(src), "--out", str(tmp_path / "cap"), "--json", "--rotate", "0"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out.strip().splitlines()[-1])["turn_hint"] == 180
    assert captured.err.count("--rotate 180") == 1
    # Turned back as it advises, the same photos say nothing.
    assert main(["capture", "--source", str(src), "--out", str(tmp_path / "cap2"), "--json", "--rotate", "180"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out.strip().splitlines()[-1])["turn_hint"] is None and "--rotate" not in captured.err
