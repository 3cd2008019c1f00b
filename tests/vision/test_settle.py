"""Settle detector: hysteresis on synthetic frame sequences (moving → settled once, hand = motion,
sensor noise and slow light drift do not fire, a slow push ends the rest)."""

from __future__ import annotations

import numpy as np
import pytest
from pipeline_helpers import dimmed

from kosti.vision.settle import SettleDetector, SettleState

FPS = 30.0
W, H = 640, 360


def table(rng: np.random.Generator | None = None) -> np.ndarray:
    """A green table with a fixed texture."""
    g = np.random.default_rng(7)
    img = np.empty((H, W, 3), np.uint8)
    img[:] = (40, 110, 45)
    img = np.clip(img + g.normal(0, 4, (H, W, 1)), 0, 255).astype(np.uint8)
    return img


def with_dice(base: np.ndarray, positions: list[tuple[int, int]], side: int = 30) -> np.ndarray:
    img = base.copy()
    for x, y in positions:
        img[y : y + side, x : x + side] = 235
        img[y + side // 2 - 3 : y + side // 2 + 3, x + side // 2 - 3 : x + side // 2 + 3] = 20
    return img


def noisy(img: np.ndarray, rng: np.random.Generator, sigma: float) -> np.ndarray:
    return np.clip(img.astype(np.float32) + rng.normal(0, sigma, img.shape), 0, 255).astype(np.uint8)


def run(det: SettleDetector, frames: list[np.ndarray], t0: float = 0.0):
    return [det.update(f, t0 + i / FPS) for i, f in enumerate(frames)]


def tumble(base: np.ndarray, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Dice jumping to random places every frame."""
    return [with_dice(base, [tuple(rng.integers(0, [W - 40, H - 40])) for _ in range(5)]) for _ in range(n)]


def test_moving_then_still_settles_exactly_once_after_still_time():
    rng = np.random.default_rng(0)
    base = table()
    rest = with_dice(base, [(100, 100), (200, 150), (300, 120), (400, 200), (500, 90)])
    frames = tumble(base, 30, rng) + [rest] * 60
    det = SettleDetector(still_s=0.4)
    ups = run(det, frames)
    events = [i for i, u in enumerate(ups) if u.settled_now]
    assert len(events) == 1
    # Frame 30 still differs from the last tumble frame; frame 31 is the first still one, and
    # 0.4 s at 30 fps (12 frames) later is frame 43.
    assert events[0] == 31 + 12
    assert all(u.state is SettleState.MOVING for u in ups[1:30])
    assert ups[35].state is SettleState.SETTLING
    assert all(u.state is SettleState.SETTLED for u in ups[43:])
    assert ups[-1].rest_id == 1


def test_each_rest_period_gives_one_event():
    rng = np.random.default_rng(1)
    base = table()
    frames = []
    for k in range(3):
        frames += tumble(base, 15, rng) + [with_dice(base, [(50 + 90 * k, 60), (300, 200 + 20 * k)])] * 30
    ups = run(SettleDetector(), frames)
    assert sum(u.settled_now for u in ups) == 3
    assert ups[-1].rest_id == 3


def test_short_pause_shorter_than_still_time_does_not_settle():
    rng = np.random.default_rng(2)
    base = table()
    pause = with_dice(base, [(100, 100)])
    frames = tumble(base, 10, rng) + [pause] * 8 + tumble(base, 10, rng)  # 8 frames = 0.27 s < 0.4 s
    ups = run(SettleDetector(still_s=0.4), frames)
    assert not any(u.settled_now for u in ups)
    assert ups[-1].state is SettleState.MOVING


def test_hand_over_the_table_is_motion_and_ends_the_rest():
    base = table()
    rest = with_dice(base, [(100, 100), (400, 200)])
    frames = [rest] * 30
    # A skin-coloured hand (a big blob) sweeps across the still table, then leaves.
    for k in range(12):
        f = rest.copy()
        x = 40 * k
        f[150:330, x : x + 160] = (120, 150, 200)
        frames.append(f)
    frames += [rest] * 30
    ups = run(SettleDetector(), frames)
    assert ups[29].state is SettleState.SETTLED
    assert all(u.state is SettleState.MOVING for u in ups[31:42])
    # The hand gone, the same dice settle again: a second rest period (the pipeline decides it is no new throw).
    assert sum(u.settled_now for u in ups) == 2


@pytest.mark.parametrize("sigma", [2.0, 4.0])
def test_sensor_noise_alone_never_counts_as_motion(sigma):
    rng = np.random.default_rng(3)
    rest = with_dice(table(), [(100, 100), (300, 150)])
    frames = [noisy(rest, rng, sigma) for _ in range(120)]
    ups = run(SettleDetector(), frames)
    assert sum(u.settled_now for u in ups) == 1  # the first rest is reported (the table's state was unknown)
    assert all(u.state is SettleState.SETTLED for u in ups[13:])
    assert max(u.motion for u in ups[1:]) < SettleDetector().still_fraction


def test_slow_light_change_does_not_fire_but_a_slow_push_does():
    base = table()
    rest = with_dice(base, [(100, 100), (300, 150)])
    # Light fades by 10 gray levels over 4 s: uniform, below diff_threshold frame to frame and in total.
    frames = [np.clip(rest.astype(np.int16) - round(10 * k / 120), 0, 255).astype(np.uint8) for k in range(120)]
    ups = run(SettleDetector(), frames)
    assert sum(u.settled_now for u in ups) == 1
    # A die pushed 1 px per frame: tiny between consecutive frames, large against the settle frame.
    frames = [with_dice(base, [(100 + k, 100), (300, 150)]) for k in range(0, 1)] * 20
    frames += [with_dice(base, [(100 + k, 100), (300, 150)]) for k in range(1, 40)]
    det = SettleDetector()
    ups = run(det, frames)
    first_rest = next(i for i, u in enumerate(ups) if u.settled_now)
    assert first_rest < 20
    assert any(u.state is SettleState.MOVING for u in ups[21:]), "a slow push must end the rest period"


def test_a_slowly_rolling_die_is_motion_until_it_stops():
    base = table()
    # One die creeps 1 px per frame (30 px/s at 640 px: a quarter pixel of the 160 px image per frame) for
    # 2 s — too little between consecutive frames to count, a lot against the frame where it went "still".
    frames = [with_dice(base, [(100 + k, 150), (400, 100)]) for k in range(60)]
    still = frames[-1]
    frames += [still] * 30
    ups = run(SettleDetector(), frames)
    assert max(u.motion for u in ups[1:60]) < SettleDetector().still_fraction  # invisible frame to frame
    events = [i for i, u in enumerate(ups) if u.settled_now]
    assert len(events) == 1 and events[0] >= 60 - 1, f"settled at frame {events[0]} while the die still rolled"
    assert events[0] <= 60 + 13


def test_resolution_change_counts_as_motion_and_thresholds_are_checked():
    det = SettleDetector(still_s=0.0)
    a = table()
    det.update(a, 0.0)
    u = det.update(a, 0.03)
    assert u.settled_now
    u = det.update(np.ascontiguousarray(a[: H // 2]), 0.06)
    assert u.state is SettleState.MOVING
    with pytest.raises(ValueError):
        SettleDetector(still_fraction=0.1, motion_fraction=0.01)


def test_reset_forgets_history():
    det = SettleDetector(still_s=0.0)
    img = table()
    run(det, [img] * 3)
    assert det.state is SettleState.SETTLED
    det.reset()
    assert det.state is SettleState.MOVING
    assert det.update(img, 10.0).motion == 1.0


def test_a_die_still_moving_on_a_dim_table_is_motion():
    """Under a dim lamp (45 % of the light) a grey die sliding 1.5 px a frame on green felt changes its pixels by
    fewer grey levels than ``diff_threshold``: measured as it came, the table settles while the die moves. The
    detector measures motion brightened back to a normal level (``dim_gain``), as the reader reads such a frame,
    and then settles once, after the die stopped — as it does on the same table under a normal lamp."""
    base = table()

    def slide(light: float) -> list[np.ndarray]:
        frames = []
        for k in range(60):
            img = base.copy()
            x = 100 + round(1.5 * k)
            img[150:180, x:x + 30] = 160  # a plain grey die, 30 px
            frames.append(dimmed(img, light))
        return frames + [frames[-1]] * 30

    blind = run(SettleDetector(dim_gain=0.0), slide(0.45))
    assert any(u.settled_now for u in blind[:55]), "the test must show the fault: settled while the die moved"
    det = SettleDetector()
    events = [i for i, u in enumerate(run(det, slide(0.45))) if u.settled_now]
    lit = [i for i, u in enumerate(run(SettleDetector(), slide(1.0))) if u.settled_now]
    # one event, after the die stopped at frame 59 but for its last 0.2 s of sliding (the 0.4 s still time is 12
    # frames), and within 0.2 s of the event under a normal lamp
    assert len(events) == 1 and 59 + 12 - 6 <= events[0] <= 60 + 13, events
    assert len(lit) == 1 and abs(events[0] - lit[0]) <= 6, (events, lit)
    assert det.gain > 1.5


@pytest.mark.parametrize("sigma", [1.0, 3.0])
def test_sensor_noise_on_a_dim_table_is_still_no_motion(sigma):
    """The brightening multiplies the sensor noise too; a dim still table must settle once and stay settled."""
    rng = np.random.default_rng(5)
    rest = dimmed(with_dice(table(), [(100, 100), (300, 150)]), 0.45)
    det = SettleDetector()
    ups = run(det, [noisy(rest, rng, sigma) for _ in range(120)])
    assert det.gain > 1.5  # measured brightened, noise and all
    assert sum(u.settled_now for u in ups) == 1
    assert all(u.state is SettleState.SETTLED for u in ups[13:])


def test_dim_gain_is_checked():
    with pytest.raises(ValueError, match="dim_gain"):
        SettleDetector(dim_gain=0.5)
    assert SettleDetector(dim_gain=0.0).dim_gain == 0.0


def test_a_change_of_gain_on_a_still_dim_table_is_no_motion():
    """The held gain follows a lamp's flicker of ±4 % when it moves the bright end by more than 5 %: the previous
    frame and the rest reference are brought to the new gain before they are compared (before that, each change
    of gain was a global change of grey levels and a dim still table settled again and again)."""
    base = dimmed(with_dice(table(), [(100, 100), (300, 150)]), 0.45)
    frames = [np.clip(base.astype(np.float32) * (1 + 0.04 * np.sin(2 * np.pi * 7.3 * k / 30 + 0.3)), 0, 255)
              .astype(np.uint8) for k in range(300)]
    det = SettleDetector()
    gains = []
    ups = []
    for i, f in enumerate(frames):
        ups.append(det.update(f, i / FPS))
        gains.append(det.gain)
    first = next(i for i, u in enumerate(ups) if u.settled_now)
    assert len(set(gains[first:])) > 1, "the test must change the gain while the table is still"
    assert sum(u.settled_now for u in ups) == 1
    assert all(u.state is SettleState.SETTLED for u in ups[first:])
