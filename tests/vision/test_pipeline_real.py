"""Live pipeline end to end on real photos: byler-d6 replayed as a camera through the shipped dice
reader and the game engine, the settle logic on real photos (labels standing in for the reader), and
``kosti watch``."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from pipeline_helpers import BYLER, _dataset_or_skip

from kosti.sim.replay import FolderSource
from kosti.sim.virtual import VirtualTableSource
from kosti.vision.detections import Detections
from kosti.vision.pipeline import ThrowDetector
from kosti.vision.yolo_labels import read_labels
from kosti.vision.zones import Zones

# -- the real end-to-end test -----------------------------------------------------------------------
#: Roll area for the byler-d6 photos: the dice tray, as a player would calibrate it. Every labelled die of
#: the 1–5-dice photos (train and test) has its centre in x 0.10–0.87, y 0.19–0.81; the phone also caught
#: the table and the tray's rim beyond, where a hole in the cardboard looks like a pip.
TRAY = Zones(roll_area=[(0.08, 0.08), (0.92, 0.08), (0.92, 0.92), (0.08, 0.92)])


#: Label errors found in byler-d6/test (checked by eye on the photo): {photo stem: {label line: true face}}.
#: IMG_20191209_100002 line 2: the green die centred at (0.2135, 0.5651), box x 115–158 y 342–383 px, shows
#: three pips on a diagonal but is labelled class 1 (face 2).
#: IMG_20191209_095555 line 5 (0-based, the 6th line): the black die centred at (0.2516, 0.4126) shows six
#: pips in two columns but is labelled class 4 (face 5). (A six-dice photo: not one of the replayed throws.)
BYLER_LABEL_FIXES: dict[str, dict[int, int]] = {"IMG_20191209_100002": {2: 3}, "IMG_20191209_095555": {5: 6}}


def _labels(stem: str) -> list[int]:
    # class k is face k + 1; the image size does not matter for the faces
    faces = [int(v) for v in read_labels(BYLER / "labels" / "test" / f"{stem}.txt", 1, 1)[1]]
    for i, face in BYLER_LABEL_FIXES.get(stem, {}).items():
        faces[i] = face
    return sorted(faces)


def _throw_photos() -> list[tuple[Path, list[int]]]:
    photos = []
    for img in sorted((BYLER / "images" / "test").glob("*.jpg")):
        faces = _labels(img.stem)
        if 1 <= len(faces) <= 5:
            photos.append((img, faces))
    return photos


@pytest.fixture(scope="module")
def reader():
    _dataset_or_skip()
    from kosti.vision.reader import DiceReader

    return DiceReader()


def test_real_photos_replayed_as_a_camera_give_one_right_throw_each(tmp_path: Path, reader):
    photos = _throw_photos()
    assert len(photos) >= 20
    for k, (img, _) in enumerate(photos):
        (tmp_path / f"{k:03d}_{img.name}").symlink_to(img)
    det = ThrowDetector(reader, zones=TRAY, vote_frames=3)
    throws = []
    with FolderSource(tmp_path, hold_s=1.0, transition_s=0.5, fps=15, noise=2.0) as src:
        for frame in src:
            r = det.process(frame)
            if r.throw is not None:
                throws.append((src.photo_at(frame.index), r.throw))
    shown = [k for k, _ in throws]
    assert shown == list(range(len(photos))), "every photo must give exactly one throw, in order"
    right = [t.faces == photos[k][1] and t.ok for k, t in throws]
    dice_right = sum(sum(1 for a, b in zip(t.faces, photos[k][1]) if a == b) for k, t in throws)
    n_dice = sum(len(f) for _, f in photos)
    summary = f"{sum(right)}/{len(right)} throws exactly right and ok, {dice_right}/{n_dice} dice"
    print("\n" + summary)
    assert sum(right) >= 0.9 * len(right), summary


def _wants_bank(state) -> bool:
    """The scripted players' strategy: stop («хватит») with 60+ turn points whenever the rules allow."""
    return state.turn_points >= 60 and state.moves().bank


def test_real_photos_drive_a_game(tmp_path: Path, reader):
    """Photos ordered as a game of classic 1000 would need them, replayed as a camera: every settled
    throw is reported exactly once; a throw the pipeline calls "ok" has exactly the right faces (never a
    silent wrong score); an uncertain one is corrected by the table, as on the dashboard; the
    camera-driven game ends in the same state (scores, turn, log) as the game driven by the labels."""
    from kosti.engine import Bank, Roll, RuleViolation, new_game

    pool = _throw_photos()
    truth_game = new_game("classic", ["Ann", "Boris"])
    order: list[tuple[Path, list[int]]] = []
    while pool and not truth_game.over:
        n = truth_game.dice_to_throw
        pick = next((p for p in pool if len(p[1]) == n), None)
        if pick is None or _wants_bank(truth_game):
            try:
                truth_game, _ = truth_game.apply(Bank())
                continue
            except RuleViolation:
                break
        pool.remove(pick)
        order.append(pick)
        truth_game, _ = truth_game.apply(Roll(pick[1]))
        after_last_roll = truth_game
    assert len(order) >= 6
    for k, (img, _) in enumerate(order):
        (tmp_path / f"{k:03d}.jpg").symlink_to(img)

    game = new_game("classic", ["Ann", "Boris"])
    det = ThrowDetector(reader, zones=TRAY, expected_dice=game.dice_to_throw)
    throws, corrected = [], []
    with FolderSource(tmp_path, hold_s=1.0, transition_s=0.5, fps=15) as src:
        for frame in src:
            r = det.process(frame)
            if r.throw is None:
                continue
            throws.append(r.throw)
            k = len(throws) - 1
            truth = order[k][1]
            if r.throw.ok:
                assert r.throw.faces == truth, f"throw {k} ({order[k][0].name}) silently misread"
            else:
                assert r.throw.reasons, f"throw {k}: uncertain without a reason"
                corrected.append(order[k][0].name)
            game, _ = game.apply(Roll(r.throw.faces if r.throw.ok else truth))  # the table confirms/corrects
            if k + 1 < len(order):
                # The players stop where the scripted game stopped (their strategy, or no photo of that many dice).
                while _wants_bank(game) or game.dice_to_throw != len(order[k + 1][1]):
                    game, _ = game.apply(Bank())
            det.expected_dice = game.dice_to_throw
    assert len(throws) == len(order)  # every settled throw reported once
    assert game.summary() == after_last_roll.summary()
    assert any(p["score"] > 0 for p in game.summary()["players"])
    print(f"{len(throws) - len(corrected)}/{len(throws)} throws read without help; corrected: {corrected}")


# -- real photos replayed through the settle logic (labels stand in for the reader) -----------------
class LabelReader:
    """Returns the YOLO labels of whichever photo the frame shows (nearest thumbnail) — settle logic only."""

    def __init__(self, photos: list[Path]) -> None:
        self.thumbs, self.labels = [], []
        for p in photos:
            img = cv2.imread(str(p))
            self.thumbs.append(cv2.resize(img, (32, 32), interpolation=cv2.INTER_AREA).astype(np.float32))
            h, w = img.shape[:2]
            xyxy, faces = read_labels(BYLER / "labels" / "test" / f"{p.stem}.txt", w, h)
            self.labels.append(Detections(xyxy, np.ones(len(faces)), faces.astype(int), np.ones(len(faces))))

    def read(self, image: np.ndarray) -> Detections:
        t = cv2.resize(image, (32, 32), interpolation=cv2.INTER_AREA).astype(np.float32)
        k = int(np.argmin([np.abs(t - th).mean() for th in self.thumbs]))
        return self.labels[k]


def _one_die_throw(reader, seed: int, face: int):
    """The reported throw of ``face`` thrown on a one-die virtual table (seeded) after its first throw, the
    Throw button announcing it (``expect_new_throw``, as the dashboard does); None when none is reported."""
    src = VirtualTableSource(n_dice=1, realtime=False, seed=seed, tumble_s=0.5)
    det = ThrowDetector(reader, expected_dice=1)
    throws = []
    for k in range(2):
        if k:
            src.throw(faces=[face])
            det.expect_new_throw()
        throws += [r.throw for r in (det.process(src.read()) for _ in range(45)) if r.throw]
    new = [t for t in throws if t.time_s > src.throws[-1].t_start]
    assert len(new) <= 1
    return new[0] if new else None


def test_an_announced_throw_landing_by_the_last_die_is_a_new_throw(reader):
    """Seed 59: the 6 lands 22 px from where the 4 lay, on the plain cloth, and the two rests register as a
    camera shift that lays the 4 onto the 6. The Throw button said a throw happened, so it is one."""
    throw = _one_die_throw(reader, 59, 6)
    assert throw is not None and throw.ok and throw.faces == [6]


@pytest.mark.parametrize("seed", [157, 256, 150, 151, 152])
def test_one_die_on_the_virtual_table_is_never_lost(reader, seed: int):
    """Pig throws one die. On the demo's virtual table the shipped detector scores a white die showing 1
    as low as 0.1 (seeds 157 and 256: a lone 1 that the second look turns down, as it turns down a
    number token): that throw was dropped as an empty table, and the game waited for a throw it had
    seen. Every throw is now reported: read right, or held with the right guess for the table to confirm,
    never wrong and never lost."""
    throw = _one_die_throw(reader, seed, 1)
    assert throw is not None
    assert throw.faces == [1] if throw.ok else [d.guess for d in throw.dice] == [1]


def test_real_photo_replay_settles_once_per_photo(tmp_path: Path):
    _dataset_or_skip(models=False)
    photos = sorted((BYLER / "images" / "test").glob("*.jpg"))[:12]
    for k, img in enumerate(photos):
        (tmp_path / f"{k:03d}.jpg").symlink_to(img)
    det = ThrowDetector(LabelReader(photos))
    got = []
    with FolderSource(tmp_path, hold_s=0.8, transition_s=0.4, fps=30, noise=3.0) as src:
        for frame in src:
            r = det.process(frame)
            if r.throw is not None:
                got.append((src.photo_at(frame.index), r.throw.faces))
    assert [k for k, _ in got] == list(range(len(photos)))
    assert [f for _, f in got] == [_labels(p.stem) for p in photos]


# -- kosti watch ------------------------------------------------------------------------------------
def test_watch_cli_bad_input_exit_2(tmp_path: Path, capsys):
    from kosti.cli import main

    assert main(["watch", str(tmp_path / "missing")]) == 2
    assert "missing" in capsys.readouterr().err
    cv2.imwrite(str(tmp_path / "a.png"), np.zeros((32, 32, 3), np.uint8))
    assert main(["watch", "--rules", "no-such-preset", str(tmp_path)]) == 2
    assert "no-such-preset" in capsys.readouterr().err


def test_watch_cli_json_on_real_photos(tmp_path: Path, capsys, reader):
    import json

    from kosti.cli import main

    photos = _throw_photos()[:3]
    for k, (img, _) in enumerate(photos):
        (tmp_path / f"{k:03d}.jpg").symlink_to(img)
    assert main(["watch", "--json", "--photos", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"throws", "frames", "fps_processed"}
    assert len(out["throws"]) == 3 and out["frames"] > 3 * 10
    # The JSON contract of cli.md (reading accuracy is the business of the replay tests above).
    for k, throw in enumerate(out["throws"]):
        assert {"frame", "time_s", "dice", "status"} <= set(throw)
        assert throw["status"] in ("ok", "uncertain")
        assert throw["time_s"] == pytest.approx(throw["frame"] / 15, abs=1e-3)  # folder replay at 15 fps
        assert throw["dice"], f"no dice read in {photos[k][0].name}"
        for d in throw["dice"]:
            assert d["value"] in range(1, 7) and 0 <= d["confidence"] <= 1  # cli.md: the face, 1–6
            x1, y1, x2, y2 = d["box"]
            assert 0 <= x1 < x2 <= 640 and 0 <= y1 < y2 <= 640
        # ... and what it says is true: a throw given as "ok" holds the labelled faces
        if throw["status"] == "ok":
            assert sorted(d["value"] for d in throw["dice"]) == photos[k][1], photos[k][0].name
    assert any(t["status"] == "ok" for t in out["throws"])  # the check above is not vacuous


def test_watch_cli_on_a_video_with_rules(tmp_path: Path, capsys, monkeypatch):
    """``kosti watch`` over a recorded video of three virtual throws (a thumbnail lookup of the rendered
    truth stands in for the models: this checks the command, not the reader)."""
    import json

    import kosti.vision.pipeline as pipeline
    from kosti.cli import main

    src = VirtualTableSource(n_dice=5, size=(640, 360), fps=25, realtime=False, tumble_s=0.8, seed=21,
                             initial_throw=False)
    path = tmp_path / "throws.avi"
    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 25.0, (640, 360))
    rests: list[tuple[np.ndarray, Detections]] = []
    frames = 0
    with src:
        for faces in ([1, 1, 5, 2, 3], [2, 3, 4, 6, 6], [5, 5, 5, 1, 1]):
            src.throw(faces=faces)
            for _ in range(25 * 2):
                vw.write(src.read().image)
                frames += 1
            th = src.last_throw
            rest = cv2.resize(src.read().image, (32, 32), interpolation=cv2.INTER_AREA).astype(np.float32)
            rests.append((rest, Detections(th.boxes, np.ones(5), np.array([d.face for d in th.dice]), np.ones(5))))
    vw.release()

    class ThumbReader:
        def read(self, image: np.ndarray) -> Detections:
            t = cv2.resize(image, (32, 32), interpolation=cv2.INTER_AREA).astype(np.float32)
            return min(rests, key=lambda r: float(np.abs(r[0] - t).mean()))[1]

    monkeypatch.setattr(pipeline, "default_reader", lambda **kw: ThumbReader())
    assert main(["watch", "--json", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["frames"] == frames
    assert [sorted(d["value"] for d in t["dice"]) for t in out["throws"]] == [[1, 1, 2, 3, 5], [2, 3, 4, 6, 6], [1, 1, 5, 5, 5]]
    assert [t["status"] for t in out["throws"]] == ["ok"] * 3
    assert all(49 * k <= t["frame"] < 50 * (k + 1) for k, t in enumerate(out["throws"]))

    assert main(["watch", "--rules", "classic", str(path)]) == 0
    text = capsys.readouterr().out
    assert "3 throws" in text
    # 1 1 5 2 3 scores 25 and leaves 2 dice, so the second video throw (5 dice) is the wrong count for the game.
    assert "expected 2 dice" in text
