"""The table's camera wiring: the frame source feeds vision's one runner (:class:`kosti.vision.runner.LivePipeline`),
whose throws go to the game session; the runner hears what to expect after each change of the game.

:class:`LiveTable` chooses the dice reader (:func:`kosti.dashboard.readers.default_reader`), builds and starts
the runner, tells it the dice counts of the next throw (:meth:`LiveTable.on_state`, a
:attr:`kosti.dashboard.session.GameSession.state_listeners` entry), hands every settled throw to ``on_throw``,
draws and encodes the live view into a :class:`~kosti.dashboard.frames.FrameHub` only while someone watches,
and throws the virtual table's dice on request. Data flows one way: source → runner → session → views.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from kosti.dashboard.broadcast import Broadcaster
from kosti.dashboard.errors import Conflict, Invalid
from kosti.dashboard.frames import FrameHub
from kosti.dashboard.json_values import JsonObject, JsonValue, json_int
from kosti.dashboard.readers import ReaderKind, VirtualTruthReader, default_reader, describe_reader
from kosti.dashboard.source_words import source_why
from kosti.dashboard.table_settings import Settings, tuning
from kosti.dashboard.throws import TableThrow, throw_from_pipeline
from kosti.dashboard.views import GameState, roll_sizes
from kosti.sim.virtual import VirtualTableSource
from kosti.vision.orientation import OrientationCheck
from kosti.vision.overlay import encode_jpeg, placeholder_frame
from kosti.vision.recorder import ThrowRecorder
from kosti.vision.runner import LivePipeline, ReaderReload, RunnerObserver
from kosti.vision.settle import SettleState
from kosti.vision.sources import (
    Frame,
    FrameSource,
    ReconnectingSource,
    SourceError,
    open_source,
    parse_source_spec,
    redact_text,
    redact_url,
)
from kosti.vision.throw_detector import FrameResult
from kosti.vision.throws import Reader, Throw

log = logging.getLogger(__name__)

#: Seconds after a requested virtual throw during which another request is refused (the dice still roll).
THROW_LOCKOUT_S = 4.0


class LiveTable(RunnerObserver):
    """The camera side of one table.

    Args:
        source: the frame source (``None`` = no camera: throws come only through the session).
        reader: the dice reader (``None``: chosen at :meth:`start` by ``reader_kind``).
        reader_kind: ``auto`` / ``models`` / ``truth`` (:func:`default_reader`).
        source_spec: the string the source came from (shown in settings, credentials hidden).
        on_throw: called in the runner thread with every settled throw.
        changed: called when what the table shows changed (the reader was swapped).
        broadcaster: receives ``{"type": "source", "source": …}`` every two seconds.
    """

    def __init__(self, source: FrameSource | None, reader: Reader | None, reader_kind: ReaderKind | str,
                 source_spec: str | None, on_throw: Callable[[TableThrow], None], changed: Callable[[], object],
                 broadcaster: Broadcaster) -> None:
        self.source, self.source_spec = source, source_spec
        self.reader, self.reader_kind = reader, reader_kind
        self.reader_desc = ""
        #: The model hot-swap handed to the runner (``kosti models use``), or None.
        self.reader_reload: ReaderReload | None = None
        self.on_throw, self.changed, self.broadcaster = on_throw, changed, broadcaster
        self.frames = FrameHub()
        self.runner: LivePipeline | None = None
        self.settings: Settings = {}
        self.state: GameState | None = None
        self.motion = "idle"
        #: The perspective of the settled throws: whether the picture should be turned (``turn_hint``).
        self.orientation = OrientationCheck()
        self._turn: int | None = None  # the turn the table chose (None: as the source was opened)
        self.source_error = ""
        #: The latest settled throw with its frame, game or not (the teach page saves it); None before one.
        self.last_settled: TableThrow | None = None
        self.throw_requested_at = 0.0
        #: Frames the runner processed, and ``time.monotonic()`` of the newest (None before one): /healthz, /metrics.
        self.frames_seen = 0
        self.last_frame_at: float | None = None
        #: Called with every settled :class:`~kosti.vision.throws.Throw` in the runner's thread, before the game
        #: hears of it (the metrics count throws and their read latency); each must return at once.
        self.throw_listeners: list[Callable[[Throw], None]] = []
        #: ``kosti run --record DIR``: keeps the stream around each throw as a labelled clip (issue 40), or None.
        self.recorder: ThrowRecorder | None = None
        #: Where the Settings switch ``record`` keeps the clips (None: the switch does nothing).
        self.record_dir: Path | None = None

    # -- lifecycle ---------------------------------------------------------------------------------
    def make_runner(self) -> LivePipeline:
        """The runner for the current source, reader and settings (not started)."""
        assert self.source is not None
        runner = LivePipeline(self.source, self.reader, retry_s=0.5, at_end="wait", read_timeout_s=1.0,
                              skip_first_rest=True, observer=self, reader_reload=self.reader_reload)
        runner.configure(tuning(self.settings))
        return runner

    def start(self) -> None:
        """Choose the reader, then build and start the runner (no-op without a source or when running)."""
        if self.source is None or (self.runner is not None and self.runner.running):
            return
        if self.reader is None:
            try:
                self.reader, self.reader_desc = default_reader(self.source, self.reader_kind)
            except Exception as exc:  # noqa: BLE001 - keep the live view; say why nothing is read
                log.error("no dice reader: %s", exc)
                self.reader_desc = f"no dice reader: {exc}"
        elif not self.reader_desc:
            self.reader_desc = describe_reader(self.reader)
        self.runner = self.make_runner()
        self.runner.subscribe(self._throw)
        self.on_state(self.state)
        self.runner.start()

    def stop(self) -> None:
        """Stop the runner and close the source (idempotent)."""
        if self.runner is not None:
            self.runner.stop()
        elif self.source is not None:
            self.source.close()

    def apply_settings(self, settings: Settings) -> None:
        """Zones and thresholds for the runner, size and quality of the live view, the frames' turn (``rotate``;
        never on the virtual table)."""
        self.settings = settings
        if isinstance(self.source, FrameSource) and self.turnable and "rotate" in settings:
            turn = json_int(settings["rotate"])
            if turn != self.rotation:
                self.orientation.reset()  # the throws seen so far were seen the other way up
                self._turn = turn  # at once, though the runner turns the frames between two frames
                if self.runner is not None:  # ... and takes the dice lying there as no new throw
                    self.runner.turn_view(turn)
                else:
                    self.source.set_rotation(turn)
        if self.runner is not None:
            self.runner.configure(tuning(settings))
        if "record" in settings and self.record_dir is not None:  # the Settings switch (issue 40)
            mb = float(settings.get("record_mb", 500.0))  # type: ignore[arg-type]
            if settings["record"] is True and self.recorder is None:
                try:
                    self.recorder = ThrowRecorder(self.record_dir, max_mb=mb)
                except OSError as exc:
                    log.error("cannot record throws to %s: %s", self.record_dir, exc)
            elif settings["record"] is True and self.recorder is not None:
                self.recorder.max_mb = mb
            elif settings["record"] is False and self.recorder is not None:
                recorder, self.recorder = self.recorder, None
                recorder.close()

    @property
    def turnable(self) -> bool:
        """Whether the frames can be turned: a camera, a video or photos (a :class:`FrameSource`), not the virtual
        table, no source, or a stand-in that only reads frames."""
        return isinstance(self.source, FrameSource) and not isinstance(self.source, VirtualTableSource)

    @property
    def rotation(self) -> int:
        """Degrees clockwise the camera's frames are turned, or are about to be (the runner turns them between two
        frames); 0 for a source that cannot be turned."""
        if not (isinstance(self.source, FrameSource) and self.turnable):
            return 0
        return self._turn if self._turn is not None else self.source.rotation

    def on_state(self, state: GameState | None) -> None:
        """After each change of the game: the runner expects the next throw's dice counts, and a virtual table
        throws that many dice on its own."""
        self.state = state
        playing = state is not None and not state.over
        if self.runner is not None:
            self.runner.expect(sizes=roll_sizes(state) if state is not None and playing else None)
        if isinstance(self.source, VirtualTableSource) and state is not None and playing and state.dice_to_throw > 0:
            self.source.n_dice = state.dice_to_throw

    # -- the runner's reports (its thread) ---------------------------------------------------------
    def _throw(self, throw: Throw) -> None:
        if self.recorder is not None:
            self.recorder.throw(throw)
        for listener in self.throw_listeners:
            try:
                listener(throw)
            except Exception:  # noqa: BLE001 - a listener's fault must not lose the throw
                log.exception("throw listener %r failed", listener)
        if self.turnable:
            self.orientation.add_throw(throw)
        thr = throw_from_pipeline(throw)
        self.last_settled = thr
        self.on_throw(thr)

    def frame(self, frame: Frame, result: FrameResult | None) -> None:
        """Note the settle state; draw and encode the live view while a viewer wants it."""
        if self.recorder is not None:  # kosti run --record (issue 40)
            moving = result is not None and result.update.state is SettleState.MOVING
            self.recorder.frame(frame.image, frame.t, moving)
        self.source_error = ""
        self.frames_seen += 1
        self.last_frame_at = time.monotonic()
        self.motion = result.update.state.value if result is not None else "no reader"
        if self.runner is None or not self.frames.wanted():
            return  # nobody is watching: skip the overlay and the JPEG encode
        img = self.runner.annotated_frame()
        if img is not None:
            self.frames.publish(encode_jpeg(img, json_int(self.settings.get("jpeg_quality", 75)),
                                            json_int(self.settings.get("live_width", 960)) or None))

    def problem(self, message: str, ended: bool) -> None:
        """Say on every screen why there is no frame."""
        self.source_error = message
        text = "end of stream / конец записи" if ended else "camera unavailable / нет камеры"
        self.frames.publish(encode_jpeg(placeholder_frame(text)))

    def tick(self) -> None:
        """Camera health and frame rate for every screen."""
        self.broadcaster.publish({"type": "source", "source": self.source_info()})

    def reader_swapped(self, reader: Reader) -> None:
        """The runner reads with the newly activated model."""
        self.reader = reader
        self.reader_desc = describe_reader(reader)
        log.info("dice reader switched: %s", self.reader_desc)
        self.changed()

    # -- views and controls ------------------------------------------------------------------------
    @property
    def fps(self) -> float:
        """Frames per second read from the source (measured)."""
        return self.runner.fps if self.runner is not None else 0.0

    def source_info(self) -> JsonObject:
        """Source description for the dashboard: kind, spec (credentials hidden), fps, status, whether it can throw,
        the frames' turn (``rotate``) and ``turn_hint``: the turn that would put the far side of the table at the top
        when the settled throws' perspective says the picture is the wrong way up
        (:class:`kosti.vision.orientation.OrientationCheck`), else None."""
        spec = redact_url(self.source_spec)
        if self.source is None:
            return {"kind": "none", "spec": spec, "virtual": False, "status": "none", "fps": 0.0}
        status: JsonValue = self.source.status.to_dict() if isinstance(self.source, ReconnectingSource) else (
            "error" if self.source_error else "ok")
        hint = self.orientation.rotate_for(self.rotation) if self.turnable else None
        why = source_why(status, self.source_error)  # why there is no picture, in words (issue 42), or None
        return {"kind": self.source.kind, "spec": spec, "virtual": self.virtual,
                "fps": round(self.fps, 1), "motion": self.motion, "status": status, "message": self.source_error,
                "why": why[0] if why else None, "why_ru": why[1] if why else None,
                "rotate": self.rotation, "turn_hint": hint}

    @property
    def virtual(self) -> bool:
        """Whether the frames come from the virtual table (rendered dice, not a camera)."""
        return isinstance(self.source, VirtualTableSource)

    def virtual_source(self) -> VirtualTableSource:
        """The virtual table, or Conflict when this table has a real camera."""
        if not isinstance(self.source, VirtualTableSource):
            raise Conflict("this table has a real camera: throw the real dice (or enter the faces by hand)",
                           "на этом столе настоящая камера: бросайте настоящие кости (или введите грани вручную)")
        return self.source

    def throw_virtual(self, n_dice: int, faces: list[int] | None) -> None:
        """Throw ``n_dice`` dice (or exactly ``faces``) on the virtual table; Conflict while the dice still roll."""
        src = self.virtual_source()
        if not src.resting or (self.throw_requested_at and time.monotonic() - self.throw_requested_at < THROW_LOCKOUT_S):
            raise Conflict("the dice are still rolling: wait for them to settle",
                           "кости ещё катятся: подождите, пока они остановятся")
        self.throw_requested_at = time.monotonic()
        if self.runner is not None:
            self.runner.announce_throw()  # a new throw even right after start-up, never a correction
        try:
            src.throw(n_dice=n_dice, faces=faces)
        except ValueError as exc:
            raise Invalid(str(exc), f"виртуальный стол не может так бросить: {exc}") from None

    def open(self, spec: str) -> FrameSource:
        """Open source ``spec`` (a virtual table without its first automatic throw), its frames turned as the
        table's setting ``rotate`` says, else as the current camera's (``[source] rotate``: the camera's mount, kept
        when the table switches source; the virtual table is never turned); Invalid when it names nothing usable."""
        try:
            if parse_source_spec(spec).kind == "virtual":
                return open_source(spec, initial_throw=False)
            turn = self.settings.get("rotate", self.rotation)
            return open_source(spec, rotate=json_int(turn) if turn is not None else 0)
        except SourceError as exc:
            raise Invalid(redact_text(str(exc))) from None

    def switch_source(self, source: FrameSource, spec: str) -> None:
        """Stop, read from ``source`` instead (ground truth stays only on a virtual table), start again."""
        self.stop()
        self.runner = None
        self.source, self.source_spec = source, spec
        self.orientation.reset()
        self._turn = source.rotation if isinstance(source, FrameSource) else None  # opened with the table's turn
        if isinstance(self.reader, VirtualTruthReader):
            self.reader = VirtualTruthReader(source) if isinstance(source, VirtualTableSource) else None
            self.reader_desc = ""
        self.start()
