"""Issue 13: throws on a real table. The seeded clip suite (``kosti datasets clips``) replayed through
``kosti watch`` must give exactly each clip's throws — none missed, none doubled, none read while a die
moves or a hand holds dice, each read within 0.5 s of the true rest — with the shipped dice reader.
Plus the building blocks: camera-motion estimation, per-die appearance, hands, the end-of-video read."""

from __future__ import annotations

import json
from pathlib import Path

import ci_guard
import cv2
import numpy as np
import pytest
from pipeline_helpers import dimmed

from kosti.datasets import clips as clipgen
from kosti.vision.hands import appearance_change, find_hand, find_new_hand
from kosti.vision.settle import SettleDetector, SettleState, estimate_camera_motion

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "datasets"
DETECTOR = REPO / "models" / "dice_det.onnx"
#: Reading must start within this many seconds of the true rest (issue 13, "Done means").
MAX_DELAY_S = 0.5


def _real_root() -> Path | None:
    """``../shared/datasets`` when byler-d6 is there; fails in CI without it, else None (clip left out)."""
    if (SHARED / "byler-d6" / "images" / "test").is_dir():
        return SHARED
    if ci_guard.in_ci():
        pytest.fail(f"shared dataset missing: {SHARED / 'byler-d6'} (see /work/shared/datasets/README.md)")
    return None


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    if not DETECTOR.is_file():
        ci_guard.shipped(DETECTOR, "shipped detector")
    out = tmp_path_factory.mktemp("clips")
    from kosti.cli import main

    assert main(["datasets", "clips", "--out", str(out), "--seed", "1"]
                + (["--real-root", str(_real_root())] if _real_root() else ["--real-root", str(out / "none")])) == 0
    return out, json.loads((out / "clips.json").read_text())


def _watch(capsys: pytest.CaptureFixture, path: Path, dice: int | None) -> dict:
    from kosti.cli import main

    capsys.readouterr()
    rc = main(["watch", "--json", *(["--dice", str(dice)] if dice else []), str(path)])
    out = capsys.readouterr().out
    assert rc == 0
    return json.loads(out)


def test_suite_holds_every_scenario_of_the_issue(suite):
    out, manifest = suite
    names = {c["name"] for c in manifest["clips"]}
    assert set(clipgen.SCENARIOS) <= names
    assert ("shake_real" in names) == (_real_root() is not None)
    for c in manifest["clips"]:
        assert (out / c["file"]).is_file() and c["frames"] > 0 and c["throws"]


def _face(die: dict) -> int:
    """A die of ``kosti watch --json`` as the clips' truth counts it: its face, 0 when uncertain (the JSON gives the most
    likely face then, with ``"uncertain": true``)."""
    assert 1 <= die["value"] <= 6, die  # cli.md: the face showing up, 1–6
    return 0 if die.get("uncertain") else int(die["value"])


@pytest.mark.parametrize("name", [*clipgen.SCENARIOS, "shake_real"])
def test_clip_gives_exactly_its_throws(suite, capsys, name):
    out, manifest = suite
    clip = next((c for c in manifest["clips"] if c["name"] == name), None)
    if clip is None:
        ci_guard.missing(f"{name}: shared photos missing ({SHARED})")
    got = _watch(capsys, out / clip["file"], clip["dice"])
    assert got["frames"] == clip["frames"]
    want = clip["throws"]
    seen = [(sorted(_face(d) for d in t["dice"]), t["status"], t["time_s"]) for t in got["throws"]]
    assert [(f, s) for f, s, _ in seen] == [(w["faces"], w["status"]) for w in want], f"{name}: {seen}"
    for t, w in zip(got["throws"], want):
        delay = t["time_s"] - w["rest_s"]
        assert 0.0 <= delay <= MAX_DELAY_S, f"{name}: read {delay:+.2f} s after the true rest"
        assert ("corrects" in t) == bool(w.get("corrects")), f"{name}: {t}"
    print(f"\n{name}: delays {[round(t['time_s'] - w['rest_s'], 3) for t, w in zip(got['throws'], want)]}")


def test_without_motion_compensation_the_shaking_camera_never_settles(suite):
    """The clip suite can fail: the fixed-camera settle detector gives no throw on the shaking camera (judged on the
    whole view, as before issue 40: the per-die rest's comparison forgives a pixel of shake on its own)."""
    from kosti.vision.pipeline import ThrowDetector
    from kosti.vision.reader import DiceReader
    from kosti.vision.sources import VideoFileSource

    out, _ = suite
    det = ThrowDetector(DiceReader(), settle=SettleDetector(compensate=False), expected_dice=5, per_die=False)
    with VideoFileSource(out / "shake.avi", realtime=False) as src:
        throws = [r.throw for r in map(det.process, src) if r.throw is not None]
    assert throws == [], [(round(t.time_s, 2), [d.value for d in t.dice]) for t in throws]


def test_clips_are_reproducible():
    (clip,) = clipgen.build(seed=3, real_root=None, names=["end"])
    a = list(clipgen.frames(clip, 3))
    (clip,) = clipgen.build(seed=3, real_root=None, names=["end"])
    b = list(clipgen.frames(clip, 3))
    assert len(a) == len(b) == round(clip.duration_s * clipgen.FPS)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    with pytest.raises(ValueError, match="unknown clip"):
        clipgen.build(names=["nope"])


# -- building blocks ----------------------------------------------------------------------------------
def _textured(seed: int = 0, size: tuple[int, int] = (160, 90)) -> np.ndarray:
    rng = np.random.default_rng(seed)
    img = cv2.resize(rng.integers(0, 255, (size[1] // 6, size[0] // 6), dtype=np.uint8), size,
                     interpolation=cv2.INTER_CUBIC)
    return cv2.GaussianBlur(img, (0, 0), 1.0)


def test_camera_motion_is_recovered_and_implausible_motion_refused():
    src = _textured()
    m_true = cv2.getRotationMatrix2D((80, 45), 0.5, 1.0)
    m_true[:, 2] += (0.8, -0.6)
    dst = cv2.warpAffine(src, m_true, (160, 90), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT101)
    m = estimate_camera_motion(src, dst)
    assert m is not None
    pts = np.array([[10, 10, 1], [150, 80, 1], [80, 45, 1]], float).T
    assert np.abs(m @ pts - m_true @ pts).max() < 0.15  # pixels of the small image
    far = np.float32([[1, 0, 6], [0, 1, 0]])  # 6 px a frame: no shaking camera moves that much
    assert estimate_camera_motion(src, cv2.warpAffine(src, far, (160, 90), borderMode=cv2.BORDER_REFLECT101)) is None


def test_settle_tolerates_a_shaking_camera_but_not_a_moving_die():
    rng = np.random.default_rng(5)
    base = cv2.cvtColor(cv2.resize(_textured(1), (640, 360)), cv2.COLOR_GRAY2BGR)
    base[100:130, 200:230] = 235
    frames = []
    for _ in range(40):
        m = np.float32([[1, 0, rng.uniform(-3, 3)], [0, 1, rng.uniform(-3, 3)]])
        frames.append(cv2.warpAffine(base, m, (640, 360), borderMode=cv2.BORDER_REFLECT101))
    det = SettleDetector()
    ups = [det.update(f, i / 30) for i, f in enumerate(frames)]
    assert sum(u.settled_now for u in ups) == 1 and ups[-1].state is SettleState.SETTLED
    fixed = SettleDetector(compensate=False)
    assert not any(fixed.update(f, i / 30).settled_now for i, f in enumerate(frames))
    # The same shaking camera with a die sliding 2 px a frame: never at rest.
    det = SettleDetector()
    slide = []
    for k, f in enumerate(frames):
        g = f.copy()
        g[200:230, 300 + 2 * k:330 + 2 * k] = 235
        slide.append(g)
    assert not any(det.update(f, i / 30).settled_now for i, f in enumerate(slide))


def test_appearance_change_sees_a_turning_die_not_a_shifted_one():
    img = np.full((120, 120, 3), (40, 110, 45), np.uint8)
    from kosti.sim import render

    a, (box,) = render.render_table([(5, 60, 60, 10.0)], img, "white_black", size=(120, 120), die_px=30)
    b, _ = render.render_table([(5, 60, 60, 22.0)], img, "white_black", size=(120, 120), die_px=30)
    shifted = np.roll(a, (1, 2), (0, 1))
    assert appearance_change(a, shifted, box) < 0.01
    assert appearance_change(a, b, box) > 0.05


def test_hand_needs_skin_size_border_and_motion():
    img = np.full((360, 640, 3), (40, 110, 45), np.uint8)
    clipgen.draw_hand(img, clipgen.Hand(400, 180, 180.0, 80.0))
    hand = find_hand(img)
    assert hand is not None and hand.box[2] >= 600  # the forearm reaches the right edge
    still = np.zeros((90, 160), bool)
    assert find_hand(img, moved=still) is None  # a skin-toned region that never moved is the table
    moved = np.ones((90, 160), bool)
    assert find_hand(img, moved=moved) is not None
    small = np.full((360, 640, 3), (40, 110, 45), np.uint8)
    cv2.circle(small, (320, 180), 20, clipgen.SKIN, -1)  # skin-coloured but small and not from outside
    assert find_hand(small) is None


def test_a_dim_hand_and_a_dim_turning_die_are_seen_at_the_gain_of_the_frame():
    """Under 45 % of the light a hand's luma falls below the skin box and a turning die changes its pixels by
    fewer grey levels than the threshold; judged at the frame's gain (the settle detector's), both are seen."""
    img = np.full((360, 640, 3), (40, 110, 45), np.uint8)
    clipgen.draw_hand(img, clipgen.Hand(400, 180, 180.0, 80.0))
    lit = find_hand(img)
    assert lit is not None
    # at 45 % only the forearm's brightest part is skin, not the palm where the dice lie; at 30 % nothing is
    part = find_hand(dimmed(img))
    assert part is not None and part.area_fraction < 0.5 * lit.area_fraction, "the test must show the fault"
    assert find_hand(dimmed(img, 0.3)) is None, "the test must show the fault"
    for light, gain in ((0.45, 2.2), (0.3, 2.5)):
        hand = find_hand(dimmed(img, light), gain=gain)
        assert hand is not None and hand.box == lit.box
        assert hand.area_fraction == pytest.approx(lit.area_fraction, rel=0.02)
    from kosti.sim import render

    table = np.full((120, 120, 3), (40, 110, 45), np.uint8)
    a, (box,) = render.render_table([(5, 60, 60, 10.0)], table, "white_black", size=(120, 120), die_px=30)
    b, _ = render.render_table([(5, 60, 60, 14.0)], table, "white_black", size=(120, 120), die_px=30)
    turned = appearance_change(a, b, box)
    assert turned > 0.05
    assert appearance_change(dimmed(a, 0.3), dimmed(b, 0.3), box) < 0.05, "the test must show the fault"
    assert appearance_change(dimmed(a, 0.3), dimmed(b, 0.3), box, gain=1 / 0.3) == pytest.approx(turned, abs=0.03)
    assert appearance_change(dimmed(a, 0.3), np.roll(dimmed(a, 0.3), (1, 2), (0, 1)), box, gain=1 / 0.3) < 0.01


def _warm_lamp(img: np.ndarray) -> np.ndarray:
    return np.clip(img * np.array([0.7, 0.95, 1.2], np.float32) + 0.5, 0, 255).astype(np.uint8)


def _grey(img: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)


def _rewritten(video: Path, out: Path, change) -> Path:
    """``video`` written again to ``out`` (same codec and rate) with every frame passed through ``change``."""
    cap = cv2.VideoCapture(str(video))
    fps, fourcc = cap.get(cv2.CAP_PROP_FPS), int(cap.get(cv2.CAP_PROP_FOURCC))
    writer = None
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        frame = change(frame)
        if writer is None:
            writer = cv2.VideoWriter(str(out), fourcc, fps, (frame.shape[1], frame.shape[0]))
        writer.write(frame)
    cap.release()
    assert writer is not None, f"{video}: no frames"
    writer.release()
    return out


#: Camera faults of ``benchmarks/robustness.py`` that broke a clip before the pipeline was made to survive them.
CAMERA_FAULTS = {"dark-0.45": dimmed, "warm-lamp": _warm_lamp, "grey": _grey}


@pytest.mark.parametrize(("name", "fault"), [("spin", "dark-0.45"), ("palm", "dark-0.45"), ("palm", "warm-lamp"),
                                             ("palm", "grey"), ("hand_rest", "grey"), ("fixed", "grey")])
def test_a_worse_camera_gives_exactly_its_throws(suite, capsys, tmp_path, name, fault):
    """Clips with every frame through a camera fault (``benchmarks/robustness_clips.py`` measures them all):

    * at 45 % of the light (a dim lamp, an under-exposed webcam), before the settle detector and the hand and
      turning-die checks worked at the frame's gain, the spinning die's throw was read 1.03 s before it stopped
      and the dice held on a palm were read as a throw;
    * under a warm lamp or in grey, the skin colour check missed the palm, and its dice were read as a throw
      (before :func:`kosti.vision.hands.find_new_hand`); the hand resting beside the dice and the hand passing
      over them must still not make a throw.
    """
    out, manifest = suite
    clip = next(c for c in manifest["clips"] if c["name"] == name)
    worse = _rewritten(out / clip["file"], tmp_path / clip["file"], CAMERA_FAULTS[fault])
    got = _watch(capsys, worse, clip["dice"])
    seen = [(sorted(_face(d) for d in t["dice"]), t["status"]) for t in got["throws"]]
    assert seen == [(w["faces"], w["status"]) for w in clip["throws"]], f"{name}, {fault}: {seen}"
    for t, w in zip(got["throws"], clip["throws"]):
        assert 0.0 <= t["time_s"] - w["rest_s"] <= MAX_DELAY_S


def test_a_hand_is_found_without_its_colour_and_uncovered_cloth_is_not_a_hand():
    """:func:`find_new_hand` on the settle detector's grey images: a hand that came onto the table is found in a
    grey picture (no skin colour to see), and with ``dice_at`` only when it holds a die; the cloth it uncovered
    by leaving is not a hand, and neither are dice that landed or a hand-sized region that did not move."""
    from kosti.vision.settle import SettleDetector

    sd = SettleDetector()
    table = np.full((360, 640, 3), (40, 110, 45), np.uint8)
    table = np.clip(table + np.random.default_rng(3).normal(0, 3, table.shape), 0, 255).astype(np.uint8)
    hand = table.copy()
    clipgen.draw_hand(hand, clipgen.Hand(400, 180, 180.0, 80.0))
    hand = _grey(hand)
    bare = _grey(table)
    assert find_hand(hand) is None  # no colour, no skin
    moved = np.ones((90, 160), bool)
    found = find_new_hand(sd.small(bare), sd.small(hand), 640, moved=moved)
    assert found is not None and found.box[2] >= 600 and found.area_fraction > 0.05
    # only a region that holds a die just read counts (a hand holding dice; a bag moved at the edge holds none)
    on_palm = np.array([[400.0, 180.0]])
    assert find_new_hand(sd.small(bare), sd.small(hand), 640, moved=moved, dice_at=on_palm) == found
    assert find_new_hand(sd.small(bare), sd.small(hand), 640, moved=moved, dice_at=np.array([[60.0, 300.0]])) is None
    # the hand left: where it lay is new too, but it matches the table around it now
    assert find_new_hand(sd.small(hand), sd.small(bare), 640, moved=moved) is None
    # a region that did not move on the way to this rest is part of the table
    assert find_new_hand(sd.small(bare), sd.small(hand), 640, moved=np.zeros((90, 160), bool)) is None
    # five dice landed side by side at the edge: new, but the size of dice, not of a hand
    from kosti.sim import render

    dice, _ = render.render_table([(k + 1, 630, 40 + 26 * k, 0.0) for k in range(5)], table, "white_black",
                                  size=(640, 360), die_px=25)
    assert find_new_hand(sd.small(bare), sd.small(_grey(dice)), 640, moved=moved) is None


def test_an_announced_throw_is_never_taken_for_a_correction():
    """``tip``: a die tips 1.2 s after the throw was read, the same physical throw (``corrects``). When the
    source announces a new throw in between (the virtual table's Throw button:
    :meth:`ThrowDetector.expect_new_throw`), that rest is a new throw, however small the motion looked."""
    if not DETECTOR.is_file():
        ci_guard.shipped(DETECTOR, "shipped detector")
    from kosti.vision.pipeline import ThrowDetector, default_reader
    from kosti.vision.sources import Frame

    clip = clipgen.build(seed=1, real_root=None, names=["tip"])[0]
    images = list(clipgen.frames(clip, 1))
    reader = default_reader()
    for announce in (False, True):
        det = ThrowDetector(reader, expected_dice=clip.dice)
        throws = []
        for k, img in enumerate(images):
            r = det.process(Frame(img, k / clipgen.FPS, k))
            if r.throw is not None:
                throws.append(r.throw)
                if announce and len(throws) == 1:
                    det.expect_new_throw()
        assert len(throws) == 2, throws
        assert (throws[1].corrects is None) == announce, (announce, throws[1].corrects)
        assert ("corrected" in throws[1].reason_codes) == (not announce)


def test_dice_held_long_in_a_grey_picture_are_never_scored_silently():
    """A hand in a grey picture (no skin colour) holds three dice over the tray for 8 s, shifting 8 px every
    second. The colour-blind check skips the rests while the table before the hand is its reference
    (:data:`~kosti.vision.throw_detector.HAND_HOLD_S`); after that the dice are read, but every such throw asks the
    table (reason ``hand``) — never an ``ok`` score of dice in a hand."""
    from kosti.sim import render
    from kosti.vision.detections import Detections
    from kosti.vision.sources import Frame
    from kosti.vision.throw_detector import HAND_HOLD_S, ThrowDetector

    w, h = 640, 360
    bg = render.make_background("felt", w, h, 3)
    shade = render.smooth_noise(np.random.default_rng(3), h, w, 25.0)
    boxes: list[tuple[float, ...]] = []

    class HeldDiceReader:
        """Reads the dice drawn on the palm (what a reader sees there), surely."""

        def read(self, image: np.ndarray) -> Detections:
            b = np.array(boxes, float).reshape(-1, 4)
            return Detections(b, np.full(len(b), 0.95), np.array([2, 4, 6][:len(b)]), np.full(len(b), 0.97))

    det = ThrowDetector(HeldDiceReader(), expected_dice=3)
    results = []
    for i in range(int(9.5 * 30)):
        t = i / 30
        img = bg.copy()
        boxes.clear()
        if t >= 1.0:
            px = 0.45 * w + (max(0.0, 1.3 - t) / 0.3 * 0.5 * w if t < 1.3 else 8 * int(t - 1.3))
            py = 0.5 * h + 4 * (int(max(0.0, t - 1.3)) % 2)
            clipgen.draw_hand(img, clipgen.Hand(px, py, 200.0, 90.0, True), 3, shade)
            held = [(2, px - 22, py - 14, 10.0), (4, px + 6, py + 16, 40.0), (6, px + 20, py - 18, 70.0)]
            img, drawn = render.render_table(held, img, "white_black", 0.0, size=(w, h), die_px=0.0756 * h, seed=4)
            boxes.extend(tuple(b[:4]) for b in drawn)
        r = det.process(Frame(_grey(img), t, i))
        if r.skipped == "hand" or r.throw is not None:
            results.append((t, r.skipped, r.throw))
    assert any(s == "hand" for _, s, _ in results)
    late = [th for t, _, th in results if th is not None]
    assert late and any(t > 1.3 + HAND_HOLD_S for t, _, th in results if th is not None), "the test must reach expiry"
    assert all(th.status == "uncertain" and "hand" in th.reason_codes for th in late), \
        [(th.status, th.reason_codes) for th in late]


def test_the_clip_benchmark_names_what_went_wrong():
    """``benchmarks/robustness_clips.py``'s verdict of one clip, worst first — a die that tipped after the read must
    come as a correction of that throw (else the game scores it as a new throw): ``wrong``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("robustness_clips", REPO / "benchmarks" / "robustness_clips.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    tip = {"throws": [{"faces": [2, 2, 3, 4, 5], "rest_s": 2.4, "status": "ok", "corrects": True}]}

    def seen(*throws: tuple[list[int], str, float, bool]) -> dict:
        return {"throws": [{"dice": [{"value": v} if v else {"value": 2, "uncertain": True} for v in faces],
                            "status": status, "time_s": t,
                            **({"corrects": 0} if corrects else {})} for faces, status, t, corrects in throws]}

    def verdict(*throws: tuple[list[int], str, float, bool]) -> tuple[bool, str]:
        got = bench.judge(tip, seen(*throws))
        return got["right"], got["verdict"]

    assert verdict(([5, 4, 3, 2, 2], "ok", 2.6, True)) == (True, "ok")
    assert verdict(([5, 4, 3, 2, 2], "ok", 2.6, False)) == (False, "wrong")  # the correction scored anew
    assert verdict(([5, 4, 3, 2, 1], "ok", 2.6, True)) == (False, "wrong")
    assert verdict(([5, 4, 3, 2, 0], "uncertain", 2.6, True)) == (False, "asks")
    assert verdict(([5, 4, 3, 2, 2], "ok", 2.3, True)) == (False, "early")
    assert verdict(([5, 4, 3, 2, 2], "ok", 3.0, True)) == (False, "late")
    assert verdict() == (False, "missed")
    assert verdict(*[([5, 4, 3, 2, 2], "ok", 2.6, True)] * 2) == (False, "extra")
    assert bench.judge(tip, seen(([5, 4, 0, 2, 2], "uncertain", 2.6, True)))["seen"][0][0] == [2, 2, 4, 5, "?"]


def test_a_folder_of_frames_is_watched_as_its_video(suite, capsys, tmp_path):
    """cli.md: ``kosti watch`` takes "a video file or an ordered folder of frames". The frames of a clip saved as images
    (names ordered naturally: ``f9`` before ``f10``, no zero padding) give the video's own throws at the same times;
    an unreadable frame is skipped, not the end of the watch."""
    out, manifest = suite
    clip = next(c for c in manifest["clips"] if c["name"] == "fixed")
    cap = cv2.VideoCapture(str(out / clip["file"]))
    n = 0
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        cv2.imwrite(str(tmp_path / f"f{n}.png"), frame)
        n += 1
    cap.release()
    (tmp_path / "f40.png").write_bytes(b"not an image")  # a frame of the still table after the first throw
    video = _watch(capsys, out / clip["file"], clip["dice"])
    frames = _watch(capsys, tmp_path, clip["dice"])
    assert frames["frames"] == n - 1 == clip["frames"] - 1
    assert [(sorted(_face(d) for d in t["dice"]), t["status"]) for t in frames["throws"]] == \
        [(w["faces"], w["status"]) for w in clip["throws"]]
    assert [t["time_s"] for t in frames["throws"]] == pytest.approx([t["time_s"] for t in video["throws"]], abs=0.04)


def test_a_clip_from_a_camera_mounted_sideways_is_watched_turned_back(suite, capsys, tmp_path):
    """``kosti watch --rotate 90`` (``[source] rotate``): the fixed-camera clip recorded by a camera turned a quarter
    anticlockwise (every frame turned 270° clockwise, 720 × 1280) gives the clip's own throws at the same times
    once its frames are turned back."""
    from kosti.cli import main

    out, manifest = suite
    clip = next(c for c in manifest["clips"] if c["name"] == "fixed")
    sideways = _rewritten(out / clip["file"], tmp_path / clip["file"],
                          lambda f: cv2.rotate(f, cv2.ROTATE_90_COUNTERCLOCKWISE))
    capsys.readouterr()
    assert main(["watch", "--json", "--dice", str(clip["dice"]), "--rotate", "90", str(sideways)]) == 0
    got = json.loads(capsys.readouterr().out)
    assert [(sorted(_face(d) for d in t["dice"]), t["status"]) for t in got["throws"]] == \
        [(w["faces"], w["status"]) for w in clip["throws"]]
    for t, w in zip(got["throws"], clip["throws"]):
        assert 0.0 <= t["time_s"] - w["rest_s"] <= MAX_DELAY_S
    # The boxes are those of the clip itself: the frames were turned back, not read sideways.
    upright = _watch(capsys, out / clip["file"], clip["dice"])
    boxes = [sorted(d["box"] for d in t["dice"]) for t in got["throws"]]
    assert np.allclose(np.array(boxes, float), np.array([sorted(d["box"] for d in t["dice"])
                                                        for t in upright["throws"]], float), atol=3.0)


def _throws_of(clip: clipgen.Clip, **detector: object) -> tuple[list, object]:
    """Every throw the detector reports on ``clip`` (seed 1, the shipped reader), and the detector."""
    from kosti.vision.pipeline import ThrowDetector, default_reader
    from kosti.vision.sources import Frame

    det = ThrowDetector(default_reader(), expected_dice=clip.dice, keep_image=False, **detector)  # type: ignore[arg-type]
    throws = []
    for k, img in enumerate(clipgen.frames(clip, 1)):
        r = det.process(Frame(img, k / clipgen.FPS, k))
        if r.throw is not None:
            throws.append(r.throw)
    return throws, det


def test_a_die_picked_up_and_thrown_again_is_a_new_throw_never_a_correction():
    """Issue 40: one die picked up (out of the picture for 0.4 s) and thrown again to another face near where it lay.
    The rule before issue 40 (a quiet motion, one die moved by under 1.5 sides) took it for a tip-over and deleted the
    first throw (``corrects``); the die was gone, so there was no continuity: two throws."""
    ci_guard.shipped(DETECTOR, "shipped detector")
    (clip,) = clipgen.build(seed=1, real_root=None, names=["pickup_rethrow"])
    want = [w["faces"] for w in clip.expected]
    old, _ = _throws_of(clip, per_die=False)
    assert [t.faces for t in old] == want[1:] or old[-1].corrects is not None, "the test must show the fault"
    throws, det = _throws_of(clip)
    assert [t.faces for t in throws] == want
    assert [t.corrects for t in throws] == [None, None]
    assert "corrected" not in throws[1].reason_codes
    assert det.continuity is not None and det.continuity.throw is throws[1]


def test_a_die_tipping_soon_after_the_read_with_the_others_unmoved_corrects_the_throw():
    """Issue 40: a die tips onto another face 0.3 s after the throw was read, the other four unmoved and every die in
    view: one throw, corrected, and the correction says why (English and Russian, in the JSON too)."""
    ci_guard.shipped(DETECTOR, "shipped detector")
    first, _ = _throws_of(clipgen.tip_clip(1, t_tip=3.0))
    read_at = first[0].time_s
    clip = clipgen.tip_clip(1, t_tip=read_at + 0.3)
    throws, _ = _throws_of(clip)
    assert len(throws) == 2, [(t.time_s, t.faces) for t in throws]
    assert throws[1].corrects == throws[0].frame_index
    assert throws[1].faces == clip.expected[0]["faces"]
    why = throws[1].to_dict()["correction"]
    assert "the other dice stayed where they lay and every die stayed in view" in why
    assert "остальные кости не сдвинулись и все кости оставались на виду" in why
