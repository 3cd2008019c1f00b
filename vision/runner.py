"""The one camera runner: ``source → ThrowDetector`` in one loop, used by ``kosti run`` / ``demo`` (the
dashboard), ``kosti watch`` and ``kosti capture``.

:class:`LivePipeline` reads frames, feeds them to a :class:`~kosti.vision.throw_detector.ThrowDetector` and
publishes each settled :class:`~kosti.vision.throws.Throw` to subscribers (callbacks in the runner thread,
or :meth:`LivePipeline.throws` from any thread). Everything the caller changes while it runs — what the next
throw must hold (:meth:`LivePipeline.expect`), zones and thresholds (:meth:`LivePipeline.configure`), the
dice reader (:meth:`LivePipeline.swap_reader`, or the ``reader_reload`` token: the one model hot-swap), a
throw announced by the source (:meth:`LivePipeline.announce_throw`) — is queued and applied by the runner's
own thread between two frames; no other thread writes the detector's attributes.

An optional :class:`RunnerObserver` hears every processed frame (the dashboard draws and encodes the live
view there, only while someone watches), every source problem, and a tick every ``tick_s`` seconds.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from kosti.vision.detections import Detections
from kosti.vision.overlay import annotate, encode_jpeg
from kosti.vision.settle import SettleDetector, SettleState, SettleUpdate
from kosti.vision.sources import EndOfStream, Frame, FrameSource, ReconnectingSource, SourceError, redact_text
from kosti.vision.throw_detector import FrameResult, ThrowDetector, reader_dim_gain
from kosti.vision.throws import Reader, Throw, TunableReader
from kosti.vision.zones import Zones

log = logging.getLogger(__name__)

#: ``(factory, token)``: when ``token()`` changes (``kosti models use`` switched the active model), the
#: runner loads ``factory()`` and reads with it from then on.
ReaderReload = tuple[Callable[[], Reader], Callable[[], object]]


class RunnerObserver:
    """What a caller hears from the runner thread besides throws (every method a no-op here; override).

    Methods run in the runner thread and must return quickly; one that raises is logged and ignored.
    """

    def frame(self, frame: Frame, result: FrameResult | None) -> None:
        """A frame was processed: the detector's result (``None`` while no reader is loaded)."""

    def problem(self, message: str, ended: bool) -> None:
        """The source failed to give a frame (``message`` with credentials hidden); ``ended``: it has ended."""

    def tick(self) -> None:
        """Every ``tick_s`` seconds (camera health and frame rate for every screen)."""

    def reader_swapped(self, reader: Reader) -> None:
        """The runner reads with ``reader`` from now on (:meth:`LivePipeline.swap_reader` or a reload)."""


@dataclass(frozen=True)
class Tuning:
    """Zones and thresholds for :meth:`LivePipeline.configure`; ``None`` leaves a value as it is.

    The thresholds are the live ones of :data:`kosti.vision.params.LIVE_THRESHOLDS` (``still_s``,
    ``motion_fraction`` / ``still_fraction`` of :class:`~kosti.vision.params.SettleParams`; ``value_conf``,
    ``conf`` of :class:`~kosti.vision.params.ReaderParams`), whose declarations give their units, bounds and
    defaults; ``value_conf`` also sets the detector's vote. :meth:`LivePipeline.configure` checks still ≤ motion.

    Attributes:
        zones: the roll / set-aside areas.
    """

    zones: Zones | None = None
    still_s: float | None = None
    motion_fraction: float | None = None
    still_fraction: float | None = None
    value_conf: float | None = None
    conf: float | None = None

    def updated(self, new: Tuning) -> Tuning:
        """This tuning with every value ``new`` sets (not None) replaced."""

        def pick(a: float | None, b: float | None) -> float | None:
            return a if b is None else b

        return Tuning(zones=self.zones if new.zones is None else new.zones, still_s=pick(self.still_s, new.still_s),
                      motion_fraction=pick(self.motion_fraction, new.motion_fraction),
                      still_fraction=pick(self.still_fraction, new.still_fraction),
                      value_conf=pick(self.value_conf, new.value_conf), conf=pick(self.conf, new.conf))


class _NoDice:
    """The reader of a runner that has none yet: it sees nothing (the detector is not called)."""

    def read(self, image: np.ndarray) -> Detections:
        return Detections.empty()


class LivePipeline:
    """Runs ``source → ThrowDetector`` (in a background thread after :meth:`start`, or in the caller's
    thread with :meth:`run`) and publishes throws.

    Usage::

        pipe = LivePipeline(open_source("0"), DiceReader(), expected_dice=5)
        pipe.subscribe(lambda throw: print(throw.faces, throw.status))
        pipe.start()
        pipe.expect(sizes=(3,))          # after the engine says how many dice to throw next
        jpeg = pipe.live_jpeg()          # annotated frame for the MJPEG view
        pipe.stop()

    Source failures never end the thread when ``retry_s`` is a number: the error is reported
    (:meth:`status`, :meth:`RunnerObserver.problem`) and the read retried after ``retry_s`` seconds (wrap
    cameras in :class:`ReconnectingSource` for backoff); a reader failure is logged and the next frame read.
    With ``retry_s=None`` a source or reader error ends :meth:`run` and is raised (``kosti watch``).

    Args:
        source: any :class:`FrameSource` (opened by the pipeline, closed by :meth:`stop`).
        reader: the dice reader; ``None``: none could be loaded — the live view runs, nothing is read.
        zones, settle, expected_dice, vote_frames, detector_kwargs: as :class:`ThrowDetector`.
        retry_s: pause (seconds) after a source error before reading again; ``None`` = raise.
        at_end: when a finite source ends — ``"finish"``: read a rest it ended in
            (:meth:`ThrowDetector.finish`) and end the loop; ``"wait"``: report it and wait until stopped.
        read_timeout_s: seconds one read may block (``None``: the source's own).
        skip_first_rest: the first rest after start-up is never a throw (dice lying on the table when the
            dashboard restarts belong to a throw already scored), unless a throw is announced first.
        observer: hears frames, problems and ticks (:class:`RunnerObserver`).
        reader_reload: the model hot-swap (:data:`ReaderReload`), checked every ``tick_s`` seconds.
        tick_s: seconds between :meth:`RunnerObserver.tick` calls and reload checks.
    """

    def __init__(
        self,
        source: FrameSource,
        reader: Reader | None,
        zones: Zones | None = None,
        settle: SettleDetector | None = None,
        expected_dice: int | None = None,
        vote_frames: int = 3,
        retry_s: float | None = 1.0,
        *,
        at_end: Literal["finish", "wait"] = "finish",
        read_timeout_s: float | None = None,
        skip_first_rest: bool = False,
        observer: RunnerObserver | None = None,
        reader_reload: ReaderReload | None = None,
        tick_s: float = 2.0,
        **detector_kwargs: Any,
    ) -> None:
        self.source = source
        self.detector = ThrowDetector(reader if reader is not None else _NoDice(), zones, settle, expected_dice,
                                      vote_frames, **detector_kwargs)
        self.has_reader = reader is not None
        self.retry_s, self.at_end, self.read_timeout_s = retry_s, at_end, read_timeout_s
        self.observer = observer or RunnerObserver()
        self.reader_reload, self.tick_s = reader_reload, tick_s
        self._reader_token: object = reader_reload[1]() if reader_reload is not None else None
        self._armed = not skip_first_rest
        self._tuning = Tuning()
        self._subscribers: list[Callable[[Throw], None]] = []
        self._queues: list[queue.Queue[Throw | None]] = []
        self._lock = threading.Lock()
        self._changes: list[Callable[[], None]] = []
        self._loop_lock = threading.Lock()  # held by the loop while it processes a frame or applies changes
        self._loop_thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._latest: Frame | None = None
        self._latest_update: SettleUpdate | None = None
        self._error: str | None = None
        self._frames = 0
        self._arrivals: deque[float] = deque(maxlen=30)
        self._finished = threading.Event()
        self.throws_log: deque[Throw] = deque(maxlen=50)

    # -- what the caller changes (applied by the runner thread between frames) ---------------------
    def _submit(self, change: Callable[[], None]) -> None:
        with self._lock:
            self._changes.append(change)
            loop = self._loop_thread
        if loop is None or loop is threading.current_thread():
            self._apply_changes()

    def _apply_changes(self) -> None:
        with self._lock:
            changes, self._changes = self._changes, []
        if not changes:
            return
        with self._loop_lock:
            for change in changes:
                change()

    def expect(self, sizes: Sequence[int] | None, set_aside: Sequence[int] | None = None) -> None:
        """What the next throw must hold, told after each change of the game: ``sizes`` every dice count the
        next throw may have (one count is checked; none or several — a keep phase, where the count tells the
        keep — accept any), ``set_aside`` the faces set aside this turn (checked as a warning; None = not
        checked). Any thread; applied before the next frame."""
        n = int(sizes[0]) if sizes is not None and len(sizes) == 1 else None
        if n is not None and n < 0:
            raise ValueError("a dice count is >= 0")
        aside = None if set_aside is None else [int(f) for f in set_aside]

        def change() -> None:
            self.detector.expected_dice = n or None
            self.detector.expected_set_aside = aside

        self._submit(change)

    @property
    def expected_dice(self) -> int | None:
        """Dice expected in the roll area for the next throw (None = any); setting it is :meth:`expect`."""
        n: int | None = self.detector.expected_dice
        return n

    @expected_dice.setter
    def expected_dice(self, n: int | None) -> None:
        aside = self.detector.expected_set_aside
        self.expect(None if n is None else (int(n),), aside)

    @property
    def zones(self) -> Zones:
        """Current zones (set them with :meth:`configure`)."""
        return self.detector.zones

    def configure(self, tuning: Tuning) -> None:
        """Apply zones and thresholds (:class:`Tuning`; any thread, before the next frame). A still fraction
        above the motion fraction is refused with a warning in the log (each may come from another file)."""

        def change() -> None:
            self._tuning = self._tuning.updated(tuning)
            det, settle = self.detector, self.detector.settle
            if tuning.zones is not None:
                det.zones = tuning.zones
            if tuning.still_s is not None:
                settle.still_s = float(tuning.still_s)
            motion = settle.motion_fraction if tuning.motion_fraction is None else float(tuning.motion_fraction)
            still = settle.still_fraction if tuning.still_fraction is None else float(tuning.still_fraction)
            if 0.0 <= still <= motion <= 1.0:
                settle.motion_fraction, settle.still_fraction = motion, still
            else:
                log.warning("settle thresholds ignored: still_fraction %s > motion_fraction %s", still, motion)
            if tuning.value_conf is not None:
                det.min_value_confidence = float(tuning.value_conf)
            self._tune_reader(det.reader)

        self._submit(change)

    def _tune_reader(self, reader: Reader) -> None:
        if isinstance(reader, TunableReader):
            if self._tuning.conf is not None:
                reader.conf = float(self._tuning.conf)
            if self._tuning.value_conf is not None:
                reader.value_conf = float(self._tuning.value_conf)

    def swap_reader(self, reader: Reader) -> None:
        """Read with ``reader`` from the next frame on (the thresholds of :meth:`configure` apply to it)."""

        def change() -> None:
            self._tune_reader(reader)
            self.detector.reader = reader
            self.detector.settle.dim_gain = reader_dim_gain(reader)  # one dim_gain for reading and motion
            self.has_reader = True
            self._notify(self.observer.reader_swapped, reader)

        self._submit(change)

    def turn_view(self, degrees: int) -> None:
        """Turn the source's frames clockwise by ``degrees`` (0, 90, 180 or 270; ``[source] rotate``) between two
        frames, and take the dice lying there as seen: the settle detector and the last throw start afresh, and the
        rest that follows is not a throw — the dice did not move, the picture did (as :paramref:`skip_first_rest`
        after start-up). Any thread. Raises :class:`kosti.vision.sources.SourceError` for another angle, at once."""
        from kosti.vision.frame_source import check_rotation

        turn = check_rotation(degrees)

        def change() -> None:
            self.source.set_rotation(turn)
            self.detector.reset()
            self._armed = False

        self._submit(change)

    def announce_throw(self) -> None:
        """The source is throwing now (the virtual table's Throw button): the next rest is a new throw — even
        right after start-up, and never a correction of the last one (:meth:`ThrowDetector.expect_new_throw`)."""

        def change() -> None:
            self._armed = True
            self.detector.expect_new_throw()

        self._submit(change)

    def subscribe(self, callback: Callable[[Throw], None]) -> Callable[[], None]:
        """Call ``callback(throw)`` (in the pipeline thread) for every throw; returns an unsubscribe function."""
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def throws(self, timeout: float | None = None) -> Iterator[Throw]:
        """Iterate over throws from now on (any thread); ends when the pipeline stops or after ``timeout`` s idle."""
        q: queue.Queue[Throw | None] = queue.Queue()
        with self._lock:
            self._queues.append(q)
        try:
            while True:
                try:
                    item = q.get(timeout=timeout)
                except queue.Empty:
                    return
                if item is None:
                    return
                yield item
        finally:
            with self._lock:
                if q in self._queues:
                    self._queues.remove(q)

    # -- lifecycle -----------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        """True while the background thread runs."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> LivePipeline:
        """Start the background thread (idempotent)."""
        if not self.running:
            self._stop.clear()
            self._finished.clear()
            self._thread = threading.Thread(target=self.run, name="kosti-live-pipeline", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread and close the source."""
        self._stop.set()
        self.source.cancel()  # wake a read blocked on a camera or a reconnect backoff
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        self.source.close()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the run loop has finished (finite source ended or stopped); True if it has."""
        return self._finished.wait(timeout)

    # -- the loop ------------------------------------------------------------------------------------
    def run(self, max_frames: int | None = None) -> None:
        """The one frame-reading loop (in the caller's thread when called directly): read, detect, publish.

        Raises the source's or the reader's error only with ``retry_s=None``."""
        with self._lock:
            self._loop_thread = threading.current_thread()
        next_tick = 0.0
        try:
            while not self._stop.is_set() and (max_frames is None or self._frames < max_frames):
                self._apply_changes()
                if self.tick_s > 0 and time.monotonic() >= next_tick:
                    next_tick = time.monotonic() + self.tick_s
                    self._maybe_reload()
                    self._notify(self.observer.tick)
                try:
                    frame = self.source.read(timeout=self.read_timeout_s) if self.read_timeout_s else self.source.read()
                except EndOfStream:
                    if self.at_end == "wait":
                        self._problem("end of stream", True)
                        self._stop.wait(0.5)
                        continue
                    end = self.detector.finish() if self.has_reader else None  # a rest the video ended in
                    if end is not None and self._latest is not None:
                        self._handle(self._latest, end, time.time())
                    break
                except (SourceError, OSError) as exc:
                    was = self._error
                    self._problem(redact_text(str(exc)), False)
                    if self.retry_s is None:
                        raise
                    # Said once when frames stop (a reconnecting source logs its own attempts and backoff), not at
                    # every read that times out: a camera that stays away must not fill the log (issue 42).
                    if was is None and not isinstance(self.source, ReconnectingSource):
                        log.warning("frame source error: %s", self._error)
                    else:
                        log.debug("frame source error: %s", self._error)
                    self._stop.wait(self.retry_s)
                    continue
                except Exception as exc:  # noqa: BLE001 - a live table stays up; it says why there is no frame
                    if self.retry_s is None:
                        raise
                    log.exception("frame source failed")
                    self._problem(redact_text(f"{type(exc).__name__}: {exc}"), False)
                    self._stop.wait(self.retry_s)
                    continue
                arrived = time.time()
                self._error = None
                self._frames += 1
                self._arrivals.append(arrived)
                with self._loop_lock:
                    result = self._process(frame)
                self._latest = frame
                if result is not None:
                    self._latest_update = result.update
                self._handle(frame, result, arrived)
        finally:
            with self._lock:
                self._loop_thread = None
                for q in self._queues:
                    q.put(None)
            self._finished.set()

    def _process(self, frame: Frame) -> FrameResult | None:
        if not self.has_reader:
            return None
        try:
            result = self.detector.process(frame)
        except Exception as exc:  # noqa: BLE001 - a reader failure must not kill the live view
            if self.retry_s is None:
                raise
            log.exception("reading the settled frame failed")
            self._error = f"reader: {type(exc).__name__}: {exc}"
            return None
        if not self._armed and result.update.settled_now:
            self._armed = True  # the first rest after start-up: dice from before the restart
            return FrameResult(result.update, skipped="same")
        return result

    def _handle(self, frame: Frame, result: FrameResult | None, arrived: float) -> None:
        if result is not None and result.throw is not None:
            result.throw.settled_at = arrived
            self._publish(result.throw)
        self._notify(self.observer.frame, frame, result)

    def _problem(self, message: str, ended: bool) -> None:
        self._error = message
        self._notify(self.observer.problem, message, ended)

    def _notify(self, method: Callable[..., None], *args: Any) -> None:
        try:
            method(*args)
        except Exception:  # noqa: BLE001 - an observer's bug must not stop the camera
            log.exception("runner observer failed")

    def _maybe_reload(self) -> None:
        """The model hot-swap: load the newly activated model when the reload token moved."""
        if self.reader_reload is None:
            return
        factory, token_fn = self.reader_reload
        try:
            token = token_fn()
        except Exception:  # noqa: BLE001 - the registry may be mid-write; look again at the next tick
            return
        if token == self._reader_token:
            return
        self._reader_token = token
        try:
            reader = factory()
        except Exception as exc:  # noqa: BLE001 - keep reading with the old model
            log.error("the newly activated dice model cannot be loaded (%s); keeping the current one", exc)
            return
        self.swap_reader(reader)
        log.info("dice reader switched")

    def _publish(self, throw: Throw) -> None:
        self.throws_log.append(throw)
        with self._lock:
            subscribers = list(self._subscribers)
            queues = list(self._queues)
        for q in queues:
            q.put(throw)
        for cb in subscribers:
            try:
                cb(throw)
            except Exception:  # noqa: BLE001 - a subscriber bug must not stop the camera
                log.exception("throw subscriber failed")

    # -- views ---------------------------------------------------------------------------------------
    @property
    def fps(self) -> float:
        """Frames per second measured over the last 30 frames read (0 before two)."""
        t = list(self._arrivals)
        return (len(t) - 1) / max(1e-6, t[-1] - t[0]) if len(t) > 1 else 0.0

    @property
    def frames_read(self) -> int:
        """Frames read since the runner was made."""
        return self._frames

    def annotated_frame(self) -> np.ndarray | None:
        """The newest frame with the overlay (zones, last throw's dice while settled, state), or None."""
        frame, update = self._latest, self._latest_update
        if frame is None:
            return None
        if not self.has_reader:
            return annotate(frame.image, None, None, message="no dice reader - see the dashboard")
        dets = self.detector.last_detections if update is not None and update.state is SettleState.SETTLED else None
        last = self.detector.last_throw
        status = last.status if last is not None and dets is not None else None
        return annotate(frame.image, dets, update, self.detector.zones, status)

    def live_jpeg(self, quality: int = 80, max_width: int | None = 960) -> bytes | None:
        """:meth:`annotated_frame` as JPEG bytes (downscaled to ``max_width`` px), or None before the first frame."""
        img = self.annotated_frame()
        return None if img is None else encode_jpeg(img, quality, max_width)

    def status(self) -> dict[str, Any]:
        """Snapshot for the dashboard: ``running``, ``source`` (info + status), ``state``, ``motion``,
        ``fps`` (the source's), ``frames``, ``throws``, ``expected_dice``, ``error``, ``last_throw``."""
        src = self.source.status.to_dict() if isinstance(self.source, ReconnectingSource) else (
            {"state": "ok" if self._error is None else "reconnecting", "message": self._error or ""})
        update = self._latest_update
        last = self.detector.last_throw
        return {
            "running": self.running,
            "source": {"info": self.source.info(), "status": src},
            "state": update.state.value if update else None,
            "motion": round(update.motion, 4) if update else None,
            "fps": round(self.source.fps, 1),
            "frames": self._frames,
            "throws": self.detector.throws_reported,
            "expected_dice": self.expected_dice,
            "error": self._error,
            "last_throw": last.to_full_dict() if last else None,
        }

    @property
    def error(self) -> str | None:
        """Why the last read gave no frame (credentials hidden), or None while frames come."""
        return self._error


def default_reader(**kwargs: Any) -> Reader:
    """The shipped :class:`kosti.vision.reader.DiceReader` (imports it lazily). Raises its ModelLoadError."""
    from kosti.vision.reader import DiceReader

    return DiceReader(**kwargs)
