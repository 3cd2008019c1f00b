"""The dashboard web app: live view, scoreboard and controls over HTTP + WebSocket (FastAPI).

``create_app(config) -> FastAPI`` builds the app around one :class:`kosti.dashboard.table.TableService`.
Routes (OpenAPI at ``/docs``):

* ``GET /`` — the single-page UI (``dashboard/static``, served locally, works offline); ``GET /tv`` — the
  same page as a spectator view (big scores only); ``/manifest.webmanifest`` and ``/sw.js`` make it an
  installable web app;
* ``GET /api/state`` — the table snapshot (game, scoreboard, turn, allowed actions, last/pending throw);
* ``GET /api/presets`` — the rule presets; ``GET /api/games`` — stored games;
* ``POST /api/games`` — new game ``{"players": [...], "preset": "classic", "overrides": {...}}``;
* ``POST /api/games`` asks before a running game is put aside (409 ``replace_needed``; send ``"replace": true``);
  ``POST /api/games/{id}/resume`` puts a stored game back, ``/rematch`` starts the same players and rules again;
* ``POST /api/games/{id}/bank|keep|fix|confirm|discard|undo|throw|enter|remove`` — controls (``enter``: a throw
  typed in by hand, any source; ``remove``: take a die that was not thrown out of the pending throw);
* ``GET /api/games/{id}/history`` — turns, throws, actions, corrections;
* ``GET /api/throws/{id}/image.jpg`` — the settled frame (``?thumb=1`` for the thumbnail);
* ``GET /video.mjpg`` — multipart MJPEG live view with overlays; ``GET /snapshot.jpg`` — one frame;
* ``WS /ws`` — the snapshot pushed on every change; accepts commands ``{"cmd": "bank", ...}``;
* ``GET/PUT /api/settings`` — source, zones (normalised polygons), thresholds.

Errors are JSON ``{"error": English, "error_ru": Russian, "status": code}`` — every error, from one set of
handlers (:func:`_install_error_handlers`): unknown game or route → 404, an action the rules forbid → 409 with
the engine's reason, malformed input (bad JSON, a field out of range, an id ≥ 2^63) → 422, a body over
64 KiB → 413, a foreign site or host → 403, too many wrong PINs → 429, the database cannot be written →
507 (disk full) / 503, a bug → 500 (logged once, no traceback to the client).

Access: bound to a loopback address, every client may control the game. Bound elsewhere
(``--host 0.0.0.0``) anyone may watch, but control actions (POST/PUT, WebSocket commands) need the PIN
(header ``X-Kosti-Pin`` or query ``?pin=``; 6 random digits printed at start-up unless configured), with a
global exponential lockout after wrong PINs. In every mode a state-changing request or WebSocket from another
site's page, or naming a foreign host, is refused (:mod:`kosti.dashboard.access`).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import logging
import os
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Query, Request, WebSocket, WebSocketDisconnect
from fastapi import Path as PathParam
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator
from starlette.exceptions import HTTPException as StarletteHTTPException

from kosti.dashboard.access import (
    MAX_BODY_BYTES,
    AccessError,
    BodyLimit,
    CrossSiteGuard,
    PinGuard,
    allowed_host_names,
    make_pin,
)
from kosti.dashboard.store import Store, StoreError
from kosti.dashboard.table import (  # MAX_RULE_NUMBER: the engine's bound on a rule parameter (10^6)
    MAX_RULE_NUMBER,
    TableError,
    TableService,
    encode_jpeg,
    list_presets,
    placeholder_frame,
)

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).resolve().parent / "static"
LOOPBACK = {"127.0.0.1", "localhost", "::1", "127.0.1.1"}
#: Largest id a route accepts (SQLite's INTEGER is 64-bit signed); a larger one is refused with 422.
MAX_ID = 2**63 - 1
#: Longest player name (characters): a name is shown on a scoreboard row, not stored as a document.
MAX_NAME = 40
#: Largest JSON text (characters) and nesting of the free-form fields ``overrides`` and ``zones``.
MAX_FIELD_JSON, MAX_FIELD_DEPTH = 4096, 6
#: Largest WebSocket command (bytes of text).
MAX_WS_MESSAGE = 8 * 1024

GameId = Annotated[int, PathParam(ge=1, le=MAX_ID, description="game id (1 … 2^63−1)")]
ThrowId = Annotated[int, PathParam(ge=1, le=MAX_ID, description="throw id (1 … 2^63−1)")]
Face = Annotated[int, Field(ge=1, le=6)]
PlayerName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_NAME)]


def default_db_path() -> Path:
    """``$XDG_DATA_HOME/kosti/kosti.db`` (default ``~/.local/share/kosti/kosti.db``)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "kosti" / "kosti.db"


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
            :mod:`kosti.dashboard.review`); ``None`` = no review page.
        source_kwargs: extra keyword arguments for ``open_source`` (camera size and rate).
        settings: settings applied at start-up over the stored ones (zones, thresholds from the config file).
        corrections_dir: capture folder where throws the table corrected are saved as training data
            (:func:`kosti.datasets.capture.save_correction`); ``None`` = not saved.
        reader_reload: ``(factory, token)``: reload the reader with ``factory()`` when ``token()`` changes
            (the model registry's active version, ``kosti models use``).
        allowed_hosts: host names (besides IP addresses, loopback names and this machine's name) a
            state-changing request may be addressed to (``[server] allowed_hosts``; DNS rebinding guard).
        require_pin: ``True``: control needs the PIN on any address (``--pin`` given); ``None``: only off loopback.
    """

    db_path: str | Path = field(default_factory=default_db_path)
    host: str = "127.0.0.1"
    port: int = 8000
    pin: str | None = None
    source: str | None = None
    source_obj: Any = None
    reader: Any = None
    reader_kind: str = "auto"
    auto_throw_s: float | None = None
    preset: str | None = None
    players: list[str] | None = None
    overrides: dict[str, Any] | None = None
    start_capture: bool = True
    review_dir: str | Path | None = None
    source_kwargs: dict[str, Any] | None = None
    settings: dict[str, Any] | None = None
    corrections_dir: str | Path | None = None
    reader_reload: tuple[Any, Any] | None = None
    allowed_hosts: list[str] = field(default_factory=list)
    require_pin: bool | None = None

    @property
    def pin_required(self) -> bool:
        """True when bound to a non-loopback address, or when ``require_pin`` says so (``kosti run --pin``
        on 127.0.0.1: a PIN that was asked for is never silently ignored)."""
        return self.require_pin if self.require_pin is not None else self.host not in LOOPBACK


# ---------------------------------------------------------------------------------------------------
# Request models
# ---------------------------------------------------------------------------------------------------
class NewGame(BaseModel):
    """New game: player names in seat order (the first throws first), preset name, parameter overrides.
    ``replace``: put aside the unfinished game on the table (without it such a request is refused, 409
    ``replace_needed``). Names are checked by :meth:`TableService.new_game` (a reason in both languages)."""

    model_config = ConfigDict(extra="forbid")
    players: list[PlayerName] = Field(min_length=1, max_length=12, examples=[["Ann", "Boris"]])
    preset: str = Field("classic", min_length=1, max_length=40, examples=["classic"])
    overrides: dict[str, Any] | None = Field(None, examples=[{"opening": {"threshold": 75}}])
    replace: bool = False

    @field_validator("overrides")
    @classmethod
    def _overrides(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if v is None else _small_json(v, "overrides", max_number=MAX_RULE_NUMBER)


class ReplaceBody(BaseModel):
    """``replace``: put aside the unfinished game on the table (resume, rematch)."""

    model_config = ConfigDict(extra="forbid")
    replace: bool = False


def _small_json(v: Any, name: str, max_number: float | None = None) -> Any:
    """``v`` when its JSON text is at most :data:`MAX_FIELD_JSON` characters, nested at most
    :data:`MAX_FIELD_DEPTH` deep, and (with ``max_number``) every number is finite with ``|x| ≤ max_number``;
    else ``ValueError`` (→ 422 with the reason)."""

    def walk(x: Any, depth: int) -> None:
        if depth > MAX_FIELD_DEPTH:
            raise ValueError(f"{name} is nested more than {MAX_FIELD_DEPTH} levels deep")
        if isinstance(x, dict):
            for k, y in x.items():
                walk(k, depth + 1)
                walk(y, depth + 1)
        elif isinstance(x, list):
            for y in x:
                walk(y, depth + 1)
        elif isinstance(x, int | float) and not isinstance(x, bool) and max_number is not None:
            if not (abs(x) <= max_number):  # also NaN and ±inf
                raise ValueError(f"{name}: the number {x!r:.30} is out of range (|x| ≤ {max_number:g})")

    walk(v, 0)
    if len(json.dumps(v, ensure_ascii=False)) > MAX_FIELD_JSON:
        raise ValueError(f"{name} is longer than {MAX_FIELD_JSON} characters of JSON")
    return v


class KeepBody(BaseModel):
    """Dice (faces 1–6) to set aside from the last throw."""

    model_config = ConfigDict(extra="forbid")
    faces: list[Face] = Field(min_length=1, max_length=6)


class ChooseBody(BaseModel):
    """A game's own choice (games.md games): ``key`` is one of the game's choices, ``value`` a JSON value."""

    model_config = ConfigDict(extra="forbid")
    key: str = Field(min_length=1, max_length=40, examples=["op"])
    value: Any = Field(None, examples=["plus"])


class FixBody(BaseModel):
    """Correct die ``die_index`` (0-based; = number of dice to add a missed die) to ``value`` (1–6)."""

    model_config = ConfigDict(extra="forbid")
    die_index: int = Field(ge=0, le=11)
    value: int = Field(ge=1, le=6)


class DieBody(BaseModel):
    """Die ``die_index`` (0-based) of the pending throw."""

    model_config = ConfigDict(extra="forbid")
    die_index: int = Field(ge=0, le=11)


class EnterBody(BaseModel):
    """A throw entered by hand: the faces (1–6) of the dice thrown."""

    model_config = ConfigDict(extra="forbid")
    faces: list[Face] = Field(min_length=1, max_length=12)


class ConfirmBody(BaseModel):
    """Confirm the pending throw, optionally giving all its faces (1–6)."""

    model_config = ConfigDict(extra="forbid")
    faces: list[Face] | None = Field(None, min_length=1, max_length=12)


class ThrowBody(BaseModel):
    """Virtual table: throw the dice the state asks for, or force these faces."""

    model_config = ConfigDict(extra="forbid")
    faces: list[Face] | None = Field(None, min_length=1, max_length=6)


class Thresholds(BaseModel):
    """Reader / settle thresholds: detector ``conf`` and face ``value_conf`` (0–1), settle ``still_s`` (s) and
    the settle detector's changed-pixel fractions ``motion_fraction`` / ``still_fraction`` (0–1, still ≤ motion,
    checked against the current pair by :meth:`TableService.update_settings`; ``[settle] motion_threshold`` /
    ``still_threshold`` in kosti.toml)."""

    model_config = ConfigDict(extra="forbid")
    conf: float | None = Field(None, ge=0.0, lt=1.0)
    value_conf: float | None = Field(None, ge=0.0, le=1.0)
    still_s: float | None = Field(None, gt=0.0, le=5.0)
    motion_fraction: float | None = Field(None, gt=0.0, le=1.0)
    still_fraction: float | None = Field(None, ge=0.0, le=1.0)


class SettingsBody(BaseModel):
    """Settings to change: ``source`` spec, ``zones`` (``{"roll_area": [[x, y], ...], "set_aside": ...}``,
    normalised 0–1), ``thresholds``, live view width (px) and JPEG quality."""

    model_config = ConfigDict(extra="forbid")
    source: str | None = Field(None, min_length=1, max_length=2048)
    zones: dict[str, Any] | None = None
    thresholds: Thresholds | None = None
    live_width: int | None = Field(None, ge=160, le=3840)
    jpeg_quality: int | None = Field(None, ge=20, le=95)

    @field_validator("zones")
    @classmethod
    def _zones(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        if v is None:
            return v
        from kosti.vision.zones import Zones

        _small_json(v, "zones")
        return Zones.from_dict(v).to_dict()  # ValueError → 422 with the reason


# ---------------------------------------------------------------------------------------------------
# App
# ---------------------------------------------------------------------------------------------------
class WsCommand(BaseModel):
    """A WebSocket command's envelope: ``cmd``, the game it is for (like the REST path), the PIN; the rest of the
    message is the command's body, validated with the same model as the REST route (``keep`` → :class:`KeepBody`,
    ``fix`` → :class:`FixBody`, ``confirm`` → :class:`ConfirmBody`, ``throw`` → :class:`ThrowBody`)."""

    model_config = ConfigDict(extra="allow")
    cmd: str = Field(max_length=20)
    game_id: int | None = Field(None, ge=1, le=MAX_ID)
    pin: str | None = Field(None, max_length=12)


#: WebSocket commands and the REST body model each one's fields are validated with (``None`` = no fields).
WS_BODIES: dict[str, type[BaseModel] | None] = {
    "bank": None, "keep": KeepBody, "choose": ChooseBody, "fix": FixBody, "enter": EnterBody, "remove": DieBody,
    "confirm": ConfirmBody, "discard": None, "undo": None, "throw": ThrowBody,
}


def _validation_text(errors: Any) -> str:
    """Pydantic errors → ``"field: reason; field: reason"`` (the ``body`` prefix dropped)."""
    parts = []
    for e in errors:
        loc = ".".join(str(x) for x in e.get("loc", ()) if x != "body")
        parts.append(f"{loc or 'body'}: {str(e.get('msg', 'invalid'))[:200]}")
    return "; ".join(parts[:10])


def _error(status: int, en: str, ru: str, **extra: Any) -> JSONResponse:
    """The one error answer: ``{"error": English, "error_ru": Russian, "status": status}``."""
    return JSONResponse({"error": en, "error_ru": ru, "status": status, **extra}, status_code=status)


def _make_pin() -> str:
    return make_pin(6)


def create_app(config: DashboardConfig | None = None) -> FastAPI:
    """Build the dashboard app for ``config`` (see :class:`DashboardConfig`). The table is created at once;
    the capture thread starts with the app's lifespan (``uvicorn`` or ``with TestClient(app)``)."""
    config = config or DashboardConfig()
    if config.pin_required and not config.pin:
        config.pin = _make_pin()
    if config.pin is not None and not (str(config.pin).isdigit() and 4 <= len(str(config.pin)) <= 6):
        raise ValueError("the PIN must be 4–6 digits")
    source = config.source_obj
    if source is None and config.source:
        from kosti.vision.sources import open_source

        kwargs: dict[str, Any] = dict(config.source_kwargs or {})
        if config.source.strip().lower().startswith("virtual"):
            kwargs.update(auto_every_s=config.auto_throw_s, initial_throw=False)
        source = open_source(config.source, **kwargs)
    store = Store(config.db_path)  # after everything that can fail without touching the database
    table = TableService(store, source=source, reader=config.reader, reader_kind=config.reader_kind,
                         source_spec=config.source or (getattr(source, "kind", None) if source is not None else None))
    table.corrections_dir = Path(config.corrections_dir) if config.corrections_dir is not None else None
    table.reader_reload = config.reader_reload
    if config.settings:
        table.update_settings(dict(config.settings))
    resumed = table.game_id
    if config.players:
        cur = table.game_id and store.get_game(table.game_id)
        same = cur and cur.players == list(config.players) and cur.rules.get("preset") == (config.preset or "classic") \
            and (cur.rules.get("overrides") or {}) == (config.overrides or {})
        if not same:
            try:  # the command line named these players: the game on the table is put aside, not lost
                table.new_game(list(config.players), config.preset or "classic", config.overrides, actor="startup",
                               replace=True)
            except TableError as exc:
                store.close()
                raise ValueError(exc.en) from None
    if table.game_id is not None and table.game_id == resumed:
        log.info("resumed game %s (%s)", resumed, ", ".join(table.state.player_names))
    elif table.game_id is not None:
        log.info("started game %s%s", table.game_id,
                 f"; game {resumed} was put aside (resume it from the list of games)" if resumed else "")

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if config.start_capture:
            await run_in_threadpool(table.start)
        try:
            yield
        finally:
            await run_in_threadpool(table.stop)
            store.close()

    app = FastAPI(
        title="kosti dashboard",
        description="Live dice table for 1000 (Тысяча), Farkle and 10000: live view, scoreboard, controls.",
        version="0.1.0",
        lifespan=lifespan,
        docs_url=None,  # served below from local Swagger UI files: the table may have no internet
    )
    _mount_offline_docs(app)
    table.pin_required = config.pin_required
    app.state.table = table
    app.state.store = store
    app.state.config = config

    # -- errors ------------------------------------------------------------------------------------
    _install_error_handlers(app, table)
    app.add_middleware(BodyLimit, max_bytes=MAX_BODY_BYTES)

    # -- access ------------------------------------------------------------------------------------
    guard = PinGuard(config.pin)
    app.state.pin_guard = guard
    host_names = allowed_host_names([config.host, *config.allowed_hosts])

    app.add_middleware(CrossSiteGuard, names=host_names)

    def check_pin(request: Request) -> str:
        """Dependency for control routes: returns the actor name; 403 without the right PIN, 429 while locked."""
        who = request.client.host if request.client else "?"
        if not config.pin_required:
            return f"local:{who}"
        guard.check(who, request.headers.get("x-kosti-pin") or request.query_params.get("pin"))
        return f"pin:{who}"

    # -- pages -------------------------------------------------------------------------------------
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    if config.review_dir is not None:
        from kosti.dashboard.review import create_review_router

        app.include_router(create_review_router(config.review_dir, pin_check=check_pin))
        table.review_url = "/review"
        from kosti.dashboard.teach import create_teach_router  # the "teach my dice" flow (issue 14)

        app.include_router(create_teach_router(config.review_dir, table=table, pin_check=check_pin))

    from kosti.dashboard.advisor_api import create_advisor_router

    app.include_router(create_advisor_router(table))  # /api/advice, /api/stats (issue 19)

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html")

    @app.get("/tv", include_in_schema=False)
    def spectator() -> FileResponse:
        """The spectator view: the same page with big scores only (a TV, a phone leaning on the lamp)."""
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html")

    @app.get("/manifest.webmanifest", include_in_schema=False)
    def manifest() -> FileResponse:
        return FileResponse(STATIC_DIR / "manifest.webmanifest", media_type="application/manifest+json")

    @app.get("/sw.js", include_in_schema=False)
    def service_worker() -> FileResponse:
        """The service worker lives at the root so that its scope is the whole dashboard (installable PWA)."""
        return FileResponse(STATIC_DIR / "sw.js", media_type="text/javascript", headers={"Cache-Control": "no-cache"})

    @app.get("/api", include_in_schema=False, response_class=HTMLResponse)
    def api_reference() -> HTMLResponse:
        """The API as a plain page built from the OpenAPI schema (no script needed; ``/docs`` is the
        interactive Swagger UI, also served offline)."""
        rows = []
        for path, ops in app.openapi()["paths"].items():
            for method, op in ops.items():
                body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
                ref = body.get("$ref", "").rsplit("/", 1)[-1] or (body.get("anyOf", [{}])[0].get("$ref", "").rsplit("/", 1)[-1])
                rows.append(f"<tr><td><code>{method.upper()}</code></td><td><code>{html.escape(path)}</code></td>"
                            f"<td>{html.escape(op.get('summary', ''))}</td><td>{html.escape(ref)}</td></tr>")
        page = ("<!doctype html><meta charset=utf-8><title>kosti API</title>"
                "<style>body{font:14px system-ui;margin:1em}td{padding:3px 8px;border-bottom:1px solid #ccc}</style>"
                "<h1>kosti dashboard API</h1><p>Schema: <a href=/openapi.json>/openapi.json</a> · "
                "interactive: <a href=/docs>/docs</a> · WebSocket <code>/ws</code></p>"
                "<table><tr><th>method</th><th>path</th><th>what</th><th>body</th></tr>" + "".join(rows) + "</table>")
        return HTMLResponse(page)

    # -- read-only API -----------------------------------------------------------------------------
    @app.get("/api/state", summary="The table snapshot")
    def get_state() -> dict[str, Any]:
        return table.snapshot()

    @app.get("/api/presets", summary="Rule presets")
    def get_presets() -> dict[str, Any]:
        return {"presets": list_presets()}

    @app.get("/api/games", summary="Stored games, newest first (scores, turns, status)")
    def get_games(limit: int = Query(50, ge=1, le=500)) -> dict[str, Any]:
        return {"games": table.games(limit), "current": table.game_id}

    @app.get("/api/games/{game_id}/history", summary="Turns, throws, actions and corrections of a game")
    def get_history(game_id: GameId) -> dict[str, Any]:
        return table.history(game_id)

    @app.get("/api/throws/{throw_id}/image.jpg", summary="Settled frame of a throw (JPEG)",
             response_class=Response, responses={200: {"content": {"image/jpeg": {}}}})
    def throw_image(throw_id: ThrowId, thumb: bool = False) -> Response:
        data = store.throw_image(throw_id, thumbnail=thumb)
        if data is None:
            raise TableError(404, f"no image for throw {throw_id}", f"нет снимка броска {throw_id}")
        return Response(data, media_type="image/jpeg", headers={"Cache-Control": "max-age=86400"})

    # -- controls ----------------------------------------------------------------------------------
    @app.post("/api/games", summary="Start a new game (409 replace_needed while another is being played)",
              status_code=201)
    def post_game(body: NewGame, actor: str = Depends(check_pin)) -> dict[str, Any]:
        return table.new_game(body.players, body.preset, body.overrides, actor=actor, replace=body.replace)

    @app.post("/api/games/{game_id}/resume", summary="Put a stored unfinished game back on the table")
    def post_resume(game_id: GameId, body: ReplaceBody | None = None, actor: str = Depends(check_pin)) -> dict[str, Any]:
        return table.resume(game_id, actor=actor, replace=bool(body and body.replace))

    @app.post("/api/games/{game_id}/rematch", summary="New game with the same players and rules", status_code=201)
    def post_rematch(game_id: GameId, body: ReplaceBody | None = None, actor: str = Depends(check_pin)) -> dict[str, Any]:
        return table.rematch(game_id, actor=actor, replace=bool(body and body.replace))

    @app.post("/api/games/{game_id}/enter", summary="Score a throw entered by hand (any source)")
    def post_enter(game_id: GameId, body: EnterBody, actor: str = Depends(check_pin)) -> dict[str, Any]:
        return table.enter(body.faces, game_id, actor=actor)

    @app.post("/api/games/{game_id}/remove", summary="Remove a die from the pending throw (not thrown)")
    def post_remove(game_id: GameId, body: DieBody, actor: str = Depends(check_pin)) -> dict[str, Any]:
        return table.remove_die(body.die_index, game_id, actor=actor)

    @app.post("/api/games/{game_id}/bank", summary="Stop (хватит) and record the turn points")
    def post_bank(game_id: GameId, actor: str = Depends(check_pin)) -> dict[str, Any]:
        return table.bank(game_id, actor=actor)

    @app.post("/api/games/{game_id}/keep", summary="Set aside these scoring dice (presets with a choice)")
    def post_keep(game_id: GameId, body: KeepBody, actor: str = Depends(check_pin)) -> dict[str, Any]:
        return table.keep(body.faces, game_id, actor=actor)

    @app.post("/api/games/{game_id}/choose", summary="A game's own choice (claim, bet, operation …)")
    def post_choose(game_id: GameId, body: ChooseBody, actor: str = Depends(check_pin)) -> dict[str, Any]:
        return table.choose(body.key, body.value, game_id, actor=actor)

    @app.post("/api/games/{game_id}/fix", summary="Correct one die of the pending or latest throw")
    def post_fix(game_id: GameId, body: FixBody, actor: str = Depends(check_pin)) -> dict[str, Any]:
        return table.fix(body.die_index, body.value, game_id, actor=actor)

    @app.post("/api/games/{game_id}/confirm", summary="Confirm the pending (uncertain) throw")
    def post_confirm(game_id: GameId, body: ConfirmBody | None = None, actor: str = Depends(check_pin)) -> dict[str, Any]:
        return table.confirm(body.faces if body else None, game_id, actor=actor)

    @app.post("/api/games/{game_id}/discard", summary="Drop the pending throw (throw again)")
    def post_discard(game_id: GameId, actor: str = Depends(check_pin)) -> dict[str, Any]:
        return table.discard(game_id, actor=actor)

    @app.post("/api/games/{game_id}/undo", summary="Undo the latest action")
    def post_undo(game_id: GameId, actor: str = Depends(check_pin)) -> dict[str, Any]:
        return table.undo(game_id, actor=actor)

    @app.post("/api/games/{game_id}/throw", summary="Virtual table: throw the dice")
    def post_throw(game_id: GameId, body: ThrowBody | None = None, actor: str = Depends(check_pin)) -> dict[str, Any]:
        return table.request_throw(body.faces if body else None, game_id)

    @app.get("/api/settings", summary="Source, zones, thresholds")
    def get_settings() -> dict[str, Any]:
        return table.get_settings()

    @app.put("/api/settings", summary="Change source, zones, thresholds")
    def put_settings(body: SettingsBody, actor: str = Depends(check_pin)) -> dict[str, Any]:
        values = body.model_dump(exclude_none=True)
        if "thresholds" in values:
            values["thresholds"] = {k: v for k, v in values["thresholds"].items() if v is not None}
        return table.update_settings(values)

    # -- live view ---------------------------------------------------------------------------------
    @app.get("/snapshot.jpg", summary="The newest live frame with overlays (JPEG)", response_class=Response,
             responses={200: {"content": {"image/jpeg": {}}}})
    async def snapshot() -> Response:
        hub = table.frames
        seq, jpeg = hub.latest()
        if hub.age() > 0.5 and table.source is not None:  # encoding was idle: wait for a fresh frame
            seq, jpeg = await hub.next_frame(seq, timeout_s=1.5)
        if jpeg is None:
            jpeg = encode_jpeg(placeholder_frame("no camera / нет камеры"))
        return Response(jpeg, media_type="image/jpeg", headers={"Cache-Control": "no-store"})

    @app.get("/video.mjpg", summary="Live view with overlays (multipart MJPEG)", response_class=StreamingResponse)
    async def video(request: Request, fps: float = Query(30.0, gt=0, le=60)) -> StreamingResponse:
        min_gap = 1.0 / fps

        async def frames() -> AsyncIterator[bytes]:
            seq = -1
            loop = asyncio.get_running_loop()
            last = 0.0
            while True:
                if await request.is_disconnected():
                    return
                seq, jpeg = await table.frames.next_frame(seq)
                if jpeg is None:
                    jpeg = encode_jpeg(placeholder_frame("no camera / нет камеры"))
                now = loop.time()
                if now - last < min_gap:
                    await asyncio.sleep(min_gap - (now - last))
                last = loop.time()
                yield (b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: " + str(len(jpeg)).encode()
                       + b"\r\n\r\n" + jpeg + b"\r\n")

        return StreamingResponse(frames(), media_type="multipart/x-mixed-replace; boundary=frame",
                                 headers={"Cache-Control": "no-store"})

    # -- WebSocket ---------------------------------------------------------------------------------
    commands = {
        "bank": lambda a, gid, b: table.bank(gid, actor=a),
        "keep": lambda a, gid, b: table.keep(list(b.faces), gid, actor=a),
        "choose": lambda a, gid, b: table.choose(b.key, b.value, gid, actor=a),
        "fix": lambda a, gid, b: table.fix(b.die_index, b.value, gid, actor=a),
        "confirm": lambda a, gid, b: table.confirm(b.faces, gid, actor=a),
        "discard": lambda a, gid, b: table.discard(gid, actor=a),
        "enter": lambda a, gid, b: table.enter(list(b.faces), gid, actor=a),
        "remove": lambda a, gid, b: table.remove_die(b.die_index, gid, actor=a),
        "undo": lambda a, gid, b: table.undo(gid, actor=a),
        "throw": lambda a, gid, b: table.request_throw(b.faces, gid),
    }

    def parse_command(text: str) -> tuple[WsCommand, BaseModel | None]:
        """A WebSocket message → (envelope, body) validated like the REST request; :class:`TableError` 422/413."""
        if len(text) > MAX_WS_MESSAGE:
            raise TableError(413, f"command too large (limit {MAX_WS_MESSAGE} bytes)",
                             f"слишком большая команда (предел {MAX_WS_MESSAGE} байт)")
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            raise TableError(422, "malformed JSON", "неверный JSON") from None
        if not isinstance(data, dict) or data.get("cmd") not in WS_BODIES:
            raise TableError(422, f"unknown command; use one of {sorted(WS_BODIES)}",
                             f"неизвестная команда; допустимы: {', '.join(sorted(WS_BODIES))}")
        try:
            env = WsCommand.model_validate(data)
            fields = {k: v for k, v in data.items() if k not in ("cmd", "game_id", "pin")}
            model = WS_BODIES[env.cmd]
            if model is None:
                if fields:
                    raise TableError(422, f"invalid request: {next(iter(fields))}: extra inputs are not permitted",
                                     f"неверный запрос: {next(iter(fields))}: лишнее поле")
                return env, None
            return env, model.model_validate(fields)
        except ValidationError as exc:
            text_ = _validation_text(exc.errors())
            raise TableError(422, f"invalid request: {text_}", f"неверный запрос: {text_}") from None

    @app.websocket("/ws")
    async def ws(websocket: WebSocket) -> None:
        await websocket.accept()
        q = table.broadcaster.subscribe()
        conn_pin = websocket.query_params.get("pin")
        who = websocket.client.host if websocket.client else "?"
        try:
            await websocket.send_json(table.snapshot())

            async def sender() -> None:
                while True:
                    msg = await q.get()
                    await websocket.send_json(msg)

            async def receiver() -> None:
                while True:
                    msg = await websocket.receive()
                    if msg["type"] == "websocket.disconnect":
                        raise WebSocketDisconnect(msg.get("code", 1000))
                    text = msg.get("text")
                    if text is None:
                        text = (msg.get("bytes") or b"")[: MAX_WS_MESSAGE + 1].decode("utf-8", "replace")
                    await websocket.send_json(await _ws_command(text))

            async def _ws_command(text: str) -> dict[str, Any]:
                cmd = None
                try:
                    env, body = parse_command(text)
                    cmd = env.cmd
                    if config.pin_required:
                        guard.check(who, env.pin or conn_pin)
                    actor = f"{'pin' if config.pin_required else 'local'}:{who}"
                    await run_in_threadpool(commands[env.cmd], actor, env.game_id, body)
                except (TableError, AccessError, StoreError) as exc:
                    if isinstance(exc, StoreError):
                        await run_in_threadpool(table.storage_changed)
                    return {"type": "error", "cmd": cmd, **exc.to_json()}
                except Exception as exc:  # noqa: BLE001 - a bug: answered like REST's 500, the socket stays open
                    log.error("internal error on websocket command %s: %s: %s", cmd, type(exc).__name__, str(exc)[:200])
                    return {"type": "error", "cmd": cmd, "error": "internal error (a bug in kosti; see the log)",
                            "error_ru": "внутренняя ошибка (ошибка kosti; см. журнал)", "status": 500}
                return {"type": "ack", "cmd": cmd}

            tasks = [asyncio.create_task(sender()), asyncio.create_task(receiver())]
            done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for t in pending:
                t.cancel()
            for t in done:
                exc = t.exception()
                if exc is not None and not isinstance(exc, (WebSocketDisconnect, RuntimeError, KeyError)):
                    log.warning("websocket ended: %r", exc)
        except WebSocketDisconnect:
            pass
        finally:
            table.broadcaster.unsubscribe(q)

    return app


def _install_error_handlers(app: FastAPI, table: TableService) -> None:
    """Every error the app answers, in the one documented shape ``{"error", "error_ru", "status"}`` (plus
    ``"code"`` where the page reacts to the refusal, such as ``replace_needed``)."""

    async def _refused(request: Request, exc: Exception) -> JSONResponse:
        code = getattr(exc, "code", None)
        return _error(exc.status, exc.en, exc.ru, **({"code": code} if code else {}))  # type: ignore[attr-defined]

    for refusal in (TableError, AccessError):  # a control the table or the door refuses: its status and reasons
        app.add_exception_handler(refusal, _refused)

    @app.exception_handler(StoreError)
    async def _store_error(request: Request, exc: StoreError) -> JSONResponse:
        log.error("storage: %s", exc.en)
        await run_in_threadpool(table.storage_changed)
        return _error(exc.status, exc.en, exc.ru)

    @app.exception_handler(sqlite3.Error)
    async def _database_error(request: Request, exc: sqlite3.Error) -> JSONResponse:
        """A read that fails while serving (the file damaged or removed under the running table)."""
        reason = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
        log.error("database error on %s %s: %s", request.method, request.url.path, reason)
        return _error(503, f"the database cannot be read ({reason}); see docs/setup.md §8",
                      f"базу не удаётся прочитать ({reason}); см. docs/setup.md §8")

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        en, ru = _plain_reason(exc.errors())  # a sentence for the players; the validator's text stays in detail
        return _error(422, en, ru, detail=_plain_errors(exc.errors()))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        ru = {404: "не найдено", 405: "метод не разрешён", 400: "неверный запрос"}.get(exc.status_code, "ошибка запроса")
        en = str(exc.detail) if isinstance(exc.detail, str) else "request error"
        return _error(exc.status_code, en[:300], ru)

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> JSONResponse:
        log.error("internal error on %s %s: %s: %s", request.method, request.url.path, type(exc).__name__,
                  str(exc)[:200])
        return _error(500, "internal error (a bug in kosti; see the log)", "внутренняя ошибка (ошибка kosti; см. журнал)")


#: Request fields in words, ``(English, Russian)``, for the one-line reason of a malformed request.
_FIELDS = {
    "players": ("player names", "имена игроков"), "preset": ("rules", "правила"),
    "overrides": ("rule changes (JSON)", "изменения правил (JSON)"), "faces": ("faces of the dice", "грани костей"),
    "die_index": ("die number", "номер кости"), "value": ("die value", "значение кости"),
    "replace": ("replace", "замена игры"), "thresholds": ("thresholds", "пороги"), "zones": ("zones", "зоны"),
    "source": ("source", "источник"), "live_width": ("live view width", "ширина видео"),
    "jpeg_quality": ("JPEG quality", "качество JPEG"), "limit": ("limit", "предел"), "pin": ("PIN", "PIN"),
    "conf": ("detector confidence", "порог детектора"), "value_conf": ("face confidence", "порог грани"),
    "still_s": ("settle time", "время успокоения"), "dice": ("dice", "кости"), "box": ("box", "рамка"),
    "game": ("game id", "номер игры"),
}


def _plain_reason(errors: Any) -> tuple[str, str]:
    """The first validation error as a sentence for the players, ``(English, Russian)``: which field and
    what it should be — never the validator's own wording."""
    e = next(iter(errors), {}) or {}
    loc = [str(x) for x in e.get("loc", ()) if x not in ("body", "query", "path")]
    name = next((x for x in reversed(loc) if x in _FIELDS), next((x for x in reversed(loc) if not x.isdigit()), ""))
    en_f, ru_f = _FIELDS.get(name, (name or "request", name or "запрос"))
    idx = next((int(x) for x in loc if x.isdigit()), None)
    if idx is not None and name != "game":  # an item of a list (a player of a game, a die of a throw): which one
        en_i, ru_i = ("player", "игрок") if name == "players" else ("die", "кость")
        en_f, ru_f = f"{en_f} ({en_i} {idx + 1})", f"{ru_f} ({ru_i} {idx + 1})"
    typ = str(e.get("type", ""))
    ctx = e.get("ctx") or {}
    if typ == "missing":
        return f"{en_f}: missing", f"{ru_f}: не указано"
    if typ == "extra_forbidden":
        return f"unknown field {name!r}", f"неизвестное поле {name!r}"
    if typ == "too_short" and ctx.get("min_length") == 1 and name in ("players", "faces"):  # an empty list
        return {"players": ("player names: name at least one player", "имена игроков: нужен хотя бы один игрок"),
                "faces": ("faces of the dice: enter at least one die", "грани костей: нужна хотя бы одна кость")}[name]
    if typ.endswith(("too_short", "too_long")):  # a list's length, or a text's (string_too_long)
        short = typ.endswith("too_short")
        n = ctx.get("min_length" if short else "max_length")
        what = ("characters", "символов") if typ.startswith("string") else ("", "")
        return (f"{en_f}: {'at least' if short else 'at most'} {n} {what[0]}".rstrip(),
                f"{ru_f}: {'не меньше' if short else 'не больше'} {n} {what[1]}".rstrip())
    for k, en_w, ru_w in (("ge", "at least", "не меньше"), ("gt", "more than", "больше"),
                          ("le", "at most", "не больше"), ("lt", "less than", "меньше")):
        if k in ctx:
            return f"{en_f}: must be {en_w} {ctx[k]}", f"{ru_f}: должно быть {ru_w} {ctx[k]}"
    if typ == "value_error":  # our own validators (zones): their reason is already a sentence
        msg = str(e.get("msg", "")).removeprefix("Value error, ")
        return f"{en_f}: {msg}", f"{ru_f}: неверно задано ({msg})"
    if typ == "json_invalid":
        return "the request is not valid JSON", "запрос — не JSON"
    if typ.startswith(("int", "float", "bool", "list", "dict", "string", "model")):
        kind = {"int": ("a whole number", "целым числом"), "float": ("a number", "числом"),
                "bool": ("true or false", "true или false"), "list": ("a list", "списком"),
                "dict": ("an object", "объектом JSON {…}"), "string": ("text", "текстом"),
                "model": ("an object", "объектом JSON {…}")}
        en_k, ru_k = kind[next(k for k in kind if typ.startswith(k))]
        return f"{en_f}: must be {en_k}", f"{ru_f}: должно быть {ru_k}"
    return f"{en_f}: not valid", f"{ru_f}: неверное значение"


def _plain_errors(errors: Any) -> list[dict[str, Any]]:
    out = []
    for e in errors:
        out.append({"loc": [str(x) for x in e.get("loc", ())], "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))})
    return out


def _mount_offline_docs(app: FastAPI) -> None:
    """Serve the interactive OpenAPI docs at ``/docs`` from the ``swagger-ui-py`` package's files.

    FastAPI's default ``/docs`` page loads Swagger UI from a CDN and is blank offline; the table's
    Raspberry Pi usually has no internet, so the same page is built here on local copies. The API is
    OpenAPI 3.1 (FastAPI), which Swagger UI reads from version 5 on: ``swagger-ui-py`` ships 5.x (the older
    ``swagger-ui-bundle`` ships 4.15 and shows "Unable to render this definition").
    """
    import swagger_ui
    from fastapi.openapi.docs import get_swagger_ui_html

    static = Path(swagger_ui.__file__).resolve().parent / "static"
    app.mount("/docs-static", StaticFiles(directory=static), name="docs-static")

    @app.get("/docs", include_in_schema=False)
    async def _docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} — API",
            swagger_js_url="/docs-static/swagger-ui-bundle.js",
            swagger_css_url="/docs-static/swagger-ui.css",
            swagger_favicon_url="/docs-static/favicon-32x32.png",
        )
