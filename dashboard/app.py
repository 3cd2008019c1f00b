"""The dashboard web app: live view, scoreboard and controls over HTTP + WebSocket (FastAPI).

``create_app(config) -> FastAPI`` builds the app around one :class:`kosti.dashboard.table.TableService` and
includes the routers of :mod:`kosti.dashboard.routes` (OpenAPI at ``/docs``, every route with its request and
response models from :mod:`kosti.dashboard.schemas`):

* ``GET /`` — the single-page UI (``dashboard/static``, served locally, works offline); ``GET /tv`` — the
  same page as a spectator view (big scores only); ``/manifest.webmanifest`` and ``/sw.js`` make it an
  installable web app;
* ``GET /api/state`` — the table snapshot (game, scoreboard, turn, allowed actions, last/pending throw);
* ``GET /api/presets`` — the rule presets; ``GET /api/games`` — stored games;
* ``POST /api/games`` — new game ``{"players": [...], "preset": "classic", "overrides": {...}}``;
* ``POST /api/games`` asks before a running game is put aside (409 ``replace_needed``; send ``"replace": true``);
  ``POST /api/games/{id}/resume`` puts a stored game back, ``/rematch`` starts the same players and rules again;
* ``POST /api/games/{id}/bank|keep|choose|fix|confirm|discard|undo|throw|enter|remove`` — the controls, one
  command table for REST and the WebSocket (:data:`kosti.dashboard.routes.commands.COMMANDS`; ``enter``: a
  throw typed in by hand, any source; ``remove``: take a die that was not thrown out of the pending throw);
* ``GET /api/games/{id}/history`` — turns, throws, actions, corrections;
* ``GET /api/throws/{id}/image.jpg`` — the settled frame (``?thumb=1`` for the thumbnail);
* ``GET /video.mjpg`` — multipart MJPEG live view with overlays; ``GET /snapshot.jpg`` — one frame;
* ``WS /ws`` — the snapshot pushed on every change; accepts commands ``{"cmd": "bank", ...}``;
* ``GET/PUT /api/settings`` — source, zones (normalised polygons), thresholds.
* ``GET /api/games/{id}/export?format=json|csv|zip`` — a game as a file (:mod:`kosti.dashboard.export`);
* ``GET /api/join``, ``/api/join/qr.svg`` — the addresses phones open and their QR codes (:mod:`kosti.dashboard.join`);
* ``GET /healthz`` (200 / 503) and ``GET /metrics`` (Prometheus) — this machine and ``monitor_from`` only
  (:mod:`kosti.dashboard.health`).

Errors are JSON ``{"error": English, "error_ru": Russian, "status": code}`` — every error, from one set of
handlers (:func:`kosti.dashboard.routes.errors.install_error_handlers`, which maps the table's typed errors
to their status): unknown game or route → 404, an action the rules forbid → 409 with the engine's reason,
malformed input (bad JSON, a field out of range, an id ≥ 2^63) → 422, a body over 64 KiB → 413, a foreign
site or host → 403, too many wrong PINs → 429, the database cannot be written → 507 (disk full) / 503, a bug
→ 500 (logged once, no traceback to the client).

Access: bound to a loopback address, every client may control the game. Bound elsewhere
(``--host 0.0.0.0``) anyone may watch, but control actions (POST/PUT, WebSocket commands) need the PIN
(header ``X-Kosti-Pin`` or query ``?pin=``; 6 random digits printed at start-up unless configured), with a
global exponential lockout after wrong PINs. In every mode a state-changing request or WebSocket from another
site's page, or naming a foreign host, is refused (:mod:`kosti.dashboard.access`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import JsonValue

from kosti.dashboard.access import (
    MAX_BODY_BYTES,
    BodyLimit,
    CrossSiteGuard,
    PinGuard,
    allowed_host_names,
    make_pin,
)
from kosti.dashboard.errors import TableError
from kosti.dashboard.routes.commands import COMMANDS, MAX_WS_MESSAGE
from kosti.dashboard.routes.errors import install_error_handlers
from kosti.dashboard.routes.games import create_games_router
from kosti.dashboard.routes.live import create_live_router
from kosti.dashboard.routes.pages import STATIC_DIR, create_pages_router, mount_static
from kosti.dashboard.routes.settings import create_settings_router
from kosti.dashboard.routes.ws import create_ws_router
from kosti.dashboard.schemas import MAX_ID, MAX_NAME
from kosti.dashboard.store import Store
from kosti.dashboard.table import TableService

if TYPE_CHECKING:  # annotations only: the app does not import the vision runtime for them
    from kosti.config.sections import MqttSettings
    from kosti.dashboard.mqtt import TableMqtt
    from kosti.dashboard.teach import TeachJob
    from kosti.vision.pipeline import Reader
    from kosti.vision.sources import FrameSource

log = logging.getLogger(__name__)

LOOPBACK = {"127.0.0.1", "localhost", "::1", "127.0.1.1"}
#: Kept names: the WebSocket's command bodies by command (see :data:`COMMANDS`), the page folder, the limits.
WS_BODIES = {name: c.body for name, c in COMMANDS.items()}
__all__ = ["MAX_ID", "MAX_NAME", "MAX_WS_MESSAGE", "STATIC_DIR", "WS_BODIES", "DashboardConfig", "create_app",
           "default_db_path"]


def default_db_path() -> Path:
    """``kosti.db`` in the data folder (:func:`kosti.common.data_dir.default_data_dir`: ``$XDG_DATA_HOME/kosti``, …)."""
    from kosti.common.data_dir import default_data_dir

    return default_data_dir() / "kosti.db"


@dataclass
class DashboardConfig:
    """Everything :func:`create_app` needs.

    Attributes:
        db_path: SQLite file (created; the game in progress in it is resumed).
        host: bind address; a non-loopback address turns on the PIN for control actions.
        port: TCP port (used only for messages; uvicorn binds it).
        pin: control PIN (4–6 digits); ``None`` = a random 6-digit PIN when one is needed.
        source: frame source spec for :func:`kosti.vision.sources.open_source` (``virtual``, ``0``, a URL,
            a file, a folder) or ``None`` for no camera (throws only via the API/tests).
        source_obj: an already built source (overrides ``source``; tests, benchmarks).
        reader: dice reader object (``read(image) -> Detections``); ``None`` = chosen by ``reader_kind``.
        reader_kind: ``auto`` / ``models`` / ``truth`` (see :func:`kosti.dashboard.table.default_reader`).
        auto_throw_s: the virtual table throws by itself this many seconds after the dice rest.
        preset, players, overrides: start this game unless the resumed game has the same players and preset.
        start_capture: run the capture/pipeline thread while the app runs (lifespan).
        review_dir: a ``kosti capture`` folder to serve the label review page for (``/review``,
            :mod:`kosti.dashboard.routes.review`); ``None`` = no review page.
        source_kwargs: extra keyword arguments for ``open_source`` (camera size and rate).
        settings: settings applied at start-up over the stored ones (zones, thresholds from the config file).
        corrections_dir: capture folder where throws the table corrected are saved as training data
            (:func:`kosti.datasets.capture.save_correction`); ``None`` = not saved.
        record_dir, record_mb: ``kosti run --record DIR``: keep the stream around each throw as a labelled clip
            there (:meth:`TableService.record`), the folder capped at ``record_mb`` megabytes; ``None`` = not kept.
        reader_reload: ``(factory, token)``: reload the reader with ``factory()`` when ``token()`` changes
            (the model registry's active version, ``kosti models use``).
        allowed_hosts: host names (besides IP addresses, loopback names and this machine's name) a
            state-changing request may be addressed to (``[server] allowed_hosts``; DNS rebinding guard).
        require_pin: ``True``: control needs the PIN on any address (``--pin`` given); ``None``: only off loopback.
        monitor_from: networks (``192.168.1.0/24``) besides this machine that may read ``/healthz`` and ``/metrics``
            (``[server] monitor_from``). stall_s: seconds without a frame after which ``/healthz`` says the camera
            stalled (:data:`kosti.dashboard.health.STALL_S`).
        mdns: announce ``NAME.local`` and the service over mDNS with python-zeroconf while the app runs, when it is
            reachable from the LAN and no avahi-daemon does it (:func:`kosti.dashboard.mdns.announce`; ``kosti run``
            and ``kosti demo`` turn it on).
        mqtt: the ``[mqtt]`` section: with ``broker`` set, the table is published on that MQTT broker while the app
            runs (:class:`kosti.dashboard.mqtt.TableMqtt`; its ``MqttUnavailable`` when paho-mqtt is missing).
        teach_job: the teach page's training job (:class:`kosti.dashboard.teach.TeachJob`, with ``review_dir``);
            ``None`` = ``kosti train`` with its defaults on ``review_dir`` (tests pass a job with shorter options).
    """

    db_path: str | Path = field(default_factory=default_db_path)
    host: str = "127.0.0.1"
    port: int = 8000
    pin: str | None = None
    source: str | None = None
    source_obj: FrameSource | None = None
    reader: Reader | None = None
    reader_kind: str = "auto"
    auto_throw_s: float | None = None
    preset: str | None = None
    players: list[str] | None = None
    overrides: dict[str, JsonValue] | None = None
    start_capture: bool = True
    review_dir: str | Path | None = None
    source_kwargs: dict[str, JsonValue] | None = None
    settings: dict[str, JsonValue] | None = None
    corrections_dir: str | Path | None = None
    record_dir: str | Path | None = None
    record_mb: float = 500.0
    reader_reload: tuple[Callable[[], Reader], Callable[[], object]] | None = None
    allowed_hosts: list[str] = field(default_factory=list)
    require_pin: bool | None = None
    monitor_from: list[str] = field(default_factory=list)
    stall_s: float = 5.0
    mdns: bool = False
    mqtt: MqttSettings | None = None
    teach_job: TeachJob | None = None

    @property
    def pin_required(self) -> bool:
        """True when bound to a non-loopback address, or when ``require_pin`` says so (``kosti run --pin``
        on 127.0.0.1: a PIN that was asked for is never silently ignored)."""
        return self.require_pin if self.require_pin is not None else self.host not in LOOPBACK


def _make_pin() -> str:
    return make_pin(6)


def create_app(config: DashboardConfig | None = None) -> FastAPI:
    """Build the dashboard app for ``config`` (see :class:`DashboardConfig`). The table is created at once;
    the capture thread starts with the app's lifespan (``uvicorn`` or ``with TestClient(app)``). Raises
    :class:`ValueError` for a PIN that is not 4–6 digits or players the rules refuse, and what opening the source
    or the database raises (the database is closed again when a later step fails)."""
    config = config or DashboardConfig()
    if config.pin_required and not config.pin:
        config.pin = _make_pin()
    if config.pin is not None and not (str(config.pin).isdigit() and 4 <= len(str(config.pin)) <= 6):
        raise ValueError("the PIN must be 4–6 digits")
    source = _open_source(config)
    store = Store(config.db_path)  # after everything that can fail without touching the database
    try:
        table = _table(config, source, store)
        publisher = _publisher(config, table)
        table.settings.apply_file(dict(config.settings or {}))  # undoes what the file set last time and no longer does
        _start_game(config, table)
    except Exception:
        store.close()
        raise
    app = FastAPI(
        title="kosti dashboard",
        description="Live dice table for 1000 (Тысяча), Farkle and 10000: live view, scoreboard, controls.",
        version="0.1.0",
        lifespan=_lifespan(config, table, publisher),
        docs_url=None,  # served by routes.pages from local Swagger UI files: the table may have no internet
    )
    table.pin_required = config.pin_required
    app.state.table = table
    app.state.store = store
    app.state.config = config
    app.state.mqtt = publisher  # the MQTT publisher, or None
    install_error_handlers(app, table.changed)  # every error: one JSON shape, the storage state on every screen
    app.add_middleware(BodyLimit, max_bytes=MAX_BODY_BYTES)
    guard = PinGuard(config.pin)
    app.state.pin_guard = guard
    app.add_middleware(CrossSiteGuard, names=allowed_host_names([config.host, *config.allowed_hosts]))
    _include_routers(app, config, table, guard)
    return app


def _open_source(config: DashboardConfig) -> FrameSource | None:
    """The frame source ``config`` names (``source_obj`` first; the virtual table without its first throw, throwing
    by itself after ``auto_throw_s``), or None without a camera."""
    if config.source_obj is not None or not config.source:
        return config.source_obj
    from kosti.vision.sources import open_source, parse_source_spec

    kwargs: dict[str, JsonValue] = dict(config.source_kwargs or {})
    if parse_source_spec(config.source).kind == "virtual":
        kwargs.update(auto_every_s=config.auto_throw_s, initial_throw=False)
    return open_source(config.source, **kwargs)  # type: ignore[arg-type]  # open_source checks each keyword


def _table(config: DashboardConfig, source: FrameSource | None, store: Store) -> TableService:
    """The table on ``store`` and ``source``: corrections kept as training data, throws kept as clips (``kosti run
    --record DIR``, issue 40; else the Settings switch keeps them in the data folder's ``clips/``), the model
    hot-swap."""
    table = TableService(store, source=source, reader=config.reader, reader_kind=config.reader_kind,
                         source_spec=config.source or (source.kind if source is not None else None))
    table.session.corrections_dir = Path(config.corrections_dir) if config.corrections_dir is not None else None
    if config.record_dir is not None:
        table.record(config.record_dir, config.record_mb)
    else:
        table.record(Path(config.db_path).parent / "clips", on=False)
    table.live.reader_reload = config.reader_reload
    return table


def _publisher(config: DashboardConfig, table: TableService) -> TableMqtt | None:
    """The table's MQTT publisher when ``[mqtt] broker`` is set (started with the app), else None."""
    if config.mqtt is None or not config.mqtt.enabled:
        return None
    from kosti import __version__
    from kosti.dashboard.mqtt import TableMqtt

    return TableMqtt(config.mqtt, table, __version__)


def _start_game(config: DashboardConfig, table: TableService) -> None:
    """Start the game the command line names (its players, preset and rule changes) unless the game resumed from the
    database is that game — the game on the table is put aside, not lost; ValueError when the rules refuse it."""
    session, store = table.session, table.store
    resumed = session.game_id
    if config.players:
        cur = session.game_id and store.get_game(session.game_id)
        same = cur and cur.players == list(config.players) and cur.rules.get("preset") == (config.preset or "classic") \
            and (cur.rules.get("overrides") or {}) == (config.overrides or {})
        if not same:
            try:
                session.new_game(list(config.players), config.preset or "classic", config.overrides, actor="startup",
                                 replace=True)
            except TableError as exc:
                raise ValueError(exc.en) from None
    if session.game_id is not None and session.game_id == resumed and session.state is not None:
        log.info("resumed game %s (%s)", resumed, ", ".join(session.state.player_names))
    elif session.game_id is not None:
        log.info("started game %s%s", session.game_id,
                 f"; game {resumed} was put aside (resume it from the list of games)" if resumed else "")


def _lifespan(config: DashboardConfig, table: TableService,
              publisher: TableMqtt | None) -> Callable[[FastAPI], contextlib.AbstractAsyncContextManager[None]]:
    """The app's lifespan: the camera runner, the MQTT publisher and the mDNS announcement start with the app; at
    the end each stops on its own (one that fails does not skip the others), then the database closes."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if config.start_capture:
            await run_in_threadpool(table.live.start)
        if publisher is not None:
            await run_in_threadpool(publisher.start)
        announcer = None
        if config.mdns:  # NAME.local by python-zeroconf where no avahi-daemon announces the table
            from kosti.dashboard.mdns import announce

            announcer = await run_in_threadpool(announce, config.host, config.port)
        try:
            yield
        finally:
            for stop in (announcer.stop if announcer is not None else None,
                         publisher.stop if publisher is not None else None, table.live.stop):
                if stop is not None:
                    try:
                        await run_in_threadpool(stop)
                    except Exception:
                        log.exception("stopping the dashboard: %s failed", getattr(stop, "__qualname__", stop))
            table.store.close()

    return lifespan


def _pin_check(config: DashboardConfig, guard: PinGuard) -> Callable[[Request], str]:
    """The control routes' dependency: the actor's name; 403 without the right PIN, 429 while locked."""

    def check_pin(request: Request) -> str:
        who = request.client.host if request.client else "?"
        if not config.pin_required:
            return f"local:{who}"
        given = request.headers.get("x-kosti-pin")
        if not given and request.method not in ("GET", "HEAD"):
            # a GET takes the PIN from the header only: any web page can make a browser send a GET with
            # ?pin=0 (an <img>), and each would count toward the global lockout; it cannot set a header
            given = request.query_params.get("pin")
        guard.check(who, given)
        return f"pin:{who}"

    return check_pin


def _include_routers(app: FastAPI, config: DashboardConfig, table: TableService, guard: PinGuard) -> None:
    """Every router of :mod:`kosti.dashboard.routes`, and the application objects they depend on beside the table
    (``app.state.advisor``, ``app.state.metrics``)."""
    from kosti.dashboard.advisor_api import TableAdvisor
    from kosti.dashboard.health import TableMetrics
    from kosti.dashboard.routes.advice import create_advice_router
    from kosti.dashboard.routes.export import create_export_router
    from kosti.dashboard.routes.health import create_health_router
    from kosti.dashboard.routes.join import create_join_router

    check_pin = _pin_check(config, guard)
    mount_static(app)
    if config.review_dir is not None:
        from kosti.dashboard.routes.review import create_review_router
        from kosti.dashboard.routes.teach import create_teach_router  # the "teach my dice" flow (issue 14)
        from kosti.datasets.suggest import ReaderSuggester  # boxes the active reader saw but did not take (issue 41)
        from kosti.registry import reader_files

        suggester = ReaderSuggester(files=lambda: reader_files(None, None)[:2])  # the active version, as it changes
        app.include_router(create_review_router(config.review_dir, pin_check=check_pin, suggest=suggester))
        table.review_url = "/review"
        app.include_router(create_teach_router(config.review_dir, table=table.live, pin_check=check_pin,
                                               job=config.teach_job))
    app.state.advisor = TableAdvisor(table)  # the throw tables of the game on the table are built from now on
    app.include_router(create_advice_router())  # /api/advice, /api/stats (issue 19)
    app.include_router(create_pages_router(app))
    app.include_router(create_games_router(check_pin))
    app.include_router(create_export_router(table.store))  # /api/games/{id}/export (issue 43)
    app.state.metrics = TableMetrics(table)  # /metrics; /healthz for systemd's watchdog (issue 43)
    app.include_router(create_health_router(app.state.metrics, config.monitor_from, config.stall_s))
    app.include_router(create_join_router(config.host, config.port, lambda: config.pin, config.pin_required, check_pin))
    app.include_router(create_settings_router(check_pin))
    app.include_router(create_live_router())
    app.include_router(create_ws_router(guard, config.pin_required))
