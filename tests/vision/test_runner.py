"""The one camera runner (:class:`kosti.vision.runner.LivePipeline`): expectations, tuning, the reader hot-swap,
announced throws, the first rest after start-up, the observer and the end of a finite source."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from kosti.sim.virtual import VirtualTableSource
from kosti.vision.detections import Detections
from kosti.vision.runner import LivePipeline, RunnerObserver, Tuning
from kosti.vision.sources import SourceError
from kosti.vision.zones import Zones


class Truth:
    """Reads the virtual table's dice at rest (nothing before the first throw); tunable like DiceReader."""

    def __init__(self, src: VirtualTableSource) -> None:
        self.src, self.conf, self.value_conf = src, 0.5, 0.7

    def read(self, image: np.ndarray) -> Detections:
        th = self.src.last_throw
        if th is None or th.boxes is None:
            return Detections.empty()
        n = len(th.dice)
        return Detections(th.boxes, np.full(n, 0.95), np.array([d.face for d in th.dice]), np.full(n, 0.97))


class Recorder(RunnerObserver):
    def __init__(self) -> None:
        self.frames = 0
        self.skipped: list[str] = []
        self.problems: list[tuple[str, bool]] = []
        self.swapped: list[object] = []
        self.ticks = 0
        self.threads: set[str] = set()

    def frame(self, frame, result) -> None:
        self.frames += 1
        self.threads.add(threading.current_thread().name)
        if result is not None and result.skipped:
            self.skipped.append(result.skipped)

    def problem(self, message: str, ended: bool) -> None:
        self.problems.append((message, ended))

    def tick(self) -> None:
        self.ticks += 1

    def reader_swapped(self, reader) -> None:
        self.swapped.append(reader)


def virtual(**kw) -> VirtualTableSource:
    return VirtualTableSource(n_dice=3, size=(640, 360), fps=30, realtime=False, tumble_s=0.8, seed=4,
                              initial_throw=False, **kw)


def test_first_rest_is_skipped_then_announced_throws_are_read_with_the_expected_count():
    src = virtual()
    rec = Recorder()
    pipe = LivePipeline(src, Truth(src), skip_first_rest=True, observer=rec, tick_s=0)
    got = []
    pipe.subscribe(got.append)
    with src:
        src.throw(faces=[1, 2, 3])  # dice already on the table when the dashboard (re)starts
        pipe.run(max_frames=60)
        assert got == [] and "same" in rec.skipped  # the first rest after start-up is never a throw
        pipe.expect(sizes=(2,))  # the loop is not running: applied at once
        assert pipe.detector.expected_dice == 2
        pipe.announce_throw()
        src.throw(faces=[4, 5, 6])
        pipe.run(max_frames=150)
    assert len(got) == 1 and got[0].faces == [4, 5, 6]
    assert got[0].status == "uncertain" and "wrong_count" in got[0].reason_codes  # 3 dice seen, 2 expected
    assert got[0].settled_at is not None and rec.frames == 150
    pipe.expect(sizes=(4, 5))  # a keep phase: several counts, any number is accepted
    assert pipe.detector.expected_dice is None
    pipe.expect(sizes=(3,), set_aside=[5])
    assert pipe.detector.expected_dice == 3 and pipe.detector.expected_set_aside == [5]


def test_tuning_and_the_reader_hot_swap_are_applied_by_the_runner():
    src = virtual()
    rec = Recorder()
    first, second = Truth(src), Truth(src)
    first.dim_gain, second.dim_gain = 0.0, 2.0  # type: ignore[attr-defined]  # as DiceReader(dim_gain=…)
    token = {"v": 1}
    pipe = LivePipeline(src, first, observer=rec, tick_s=1e-9, reader_reload=(lambda: second, lambda: token["v"]))
    pipe.configure(Tuning(zones=Zones(), still_s=0.6, motion_fraction=0.02, still_fraction=0.004, value_conf=0.8,
                          conf=0.3))
    settle = pipe.detector.settle
    assert settle.dim_gain == 0.0  # `[reader] dim_gain` governs the settle detector's brightening too
    assert (settle.still_s, settle.motion_fraction, settle.still_fraction) == (0.6, 0.02, 0.004)
    assert pipe.detector.min_value_confidence == 0.8 and (first.conf, first.value_conf) == (0.3, 0.8)
    pipe.configure(Tuning(still_fraction=0.5))  # above the motion fraction: refused, the rest stays
    assert (settle.motion_fraction, settle.still_fraction) == (0.02, 0.004)
    with src:
        pipe.run(max_frames=3)
        assert pipe.detector.reader is first and rec.swapped == [] and rec.ticks >= 1
        token["v"] = 2  # `kosti models use` moved the registry's token
        pipe.run(max_frames=6)
    assert pipe.detector.reader is second and rec.swapped == [second]
    assert (second.conf, second.value_conf) == (0.3, 0.8)  # the thresholds follow the new reader
    assert pipe.detector.settle is settle and settle.dim_gain == 2.0  # and so does the motion's brightening


def test_a_finite_source_ends_the_loop_or_waits_and_errors_are_raised_when_asked():
    src = virtual(max_frames=20)
    rec = Recorder()
    pipe = LivePipeline(src, Truth(src), at_end="wait", observer=rec, tick_s=0)
    pipe.start()
    deadline = threading.Event()
    while not rec.problems and not deadline.wait(0.05):
        pass
    assert pipe.running  # it waits at the end of the video until stopped
    pipe.stop()
    assert ("end of stream", True) in rec.problems and not pipe.running and rec.frames == 20
    assert "kosti-live-pipeline" in rec.threads

    class Broken(VirtualTableSource):
        def _read(self, timeout):
            raise SourceError("USB read error")

    bad = Broken(n_dice=3, size=(320, 180), realtime=False, initial_throw=False)
    with pytest.raises(SourceError, match="USB"):
        LivePipeline(bad, Truth(bad), retry_s=None, tick_s=0).run(max_frames=5)


def test_without_a_reader_the_live_view_says_so():
    src = virtual(max_frames=5)
    rec = Recorder()
    pipe = LivePipeline(src, None, observer=rec, tick_s=0)
    with src:
        pipe.run()
    img = pipe.annotated_frame()
    assert img is not None and img.shape == (360, 640, 3) and rec.frames == 5
    assert float(img[:30].mean()) < float(img[40:].mean())  # the black message band across the top
    assert pipe.live_jpeg()[:2] == b"\xff\xd8"


class StillTable:
    """A table at rest seen from above: three white dice on grey, each read where it lies in the frame it is given
    (so the same dice read in a turned frame too); frames of a :class:`~kosti.vision.frame_source.FrameSource`."""

    def __init__(self) -> None:
        from kosti.vision.frame_source import FrameSource

        class Still(FrameSource):
            kind = "still"

            def __init__(self) -> None:
                super().__init__()
                self.t = 0.0

            def _open(self) -> None: ...
            def _close(self) -> None: ...

            def _read(self, timeout):
                img = np.full((360, 640, 3), 80, np.uint8)
                for x, y in ((100, 80), (300, 200), (500, 120)):
                    img[y:y + 40, x:x + 40] = 235
                self.t += 1 / 15
                return img, self.t

        self.source = Still()
        self.conf, self.value_conf = 0.5, 0.7

    def read(self, image: np.ndarray) -> Detections:
        ys, xs = np.nonzero(image[:, :, 0] > 200)
        boxes = []
        for cx in np.unique(xs // 100):  # one die per 100 px column band (the bands hold one die each way up)
            sel = xs // 100 == cx
            boxes.append([xs[sel].min(), ys[sel].min(), xs[sel].max() + 1, ys[sel].max() + 1])
        n = len(boxes)
        return Detections(np.array(boxes, float).reshape(-1, 4), np.full(n, 0.95), np.full(n, 5), np.full(n, 0.97))


@pytest.mark.parametrize("degrees", [90, 180])
def test_turning_the_picture_is_no_new_throw(degrees):
    """The dice lying on the table when the picture is turned (`[source] rotate`, the dashboard's Turn the picture)
    were already read: the runner turns the frames between two frames and takes that rest as seen. Turning the
    source's frames behind the runner's back (the control, below) reads the same dice again as a new throw."""
    for control in (False, True):
        table = StillTable()
        pipe = LivePipeline(table.source, table, tick_s=0)
        got = []
        pipe.subscribe(got.append)
        with table.source:
            pipe.run(max_frames=30)
            assert len(got) == 1 and got[0].faces == [5, 5, 5]
            if control:
                table.source.set_rotation(degrees)
            else:
                pipe.turn_view(degrees)
            pipe.run(max_frames=90)
            assert pipe.source.read().image.shape == ((640, 360, 3) if degrees == 90 else (360, 640, 3))
        assert len(got) == (2 if control else 1), [t.faces for t in got]
    with pytest.raises(SourceError, match="rotate must be"):
        pipe.turn_view(45)
