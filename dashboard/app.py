"""The dashboard web app: live view, scoreboard and controls over HTTP + WebSocket (FastAPI).

``create_app(config) -> FastAPI`` builds the app around one :class:`kosti.dashboard.table.TableService`.
Routes (OpenAPI at ``/docs``):

* ``GET /`` — the single-page UI (``dashboard/static``, served locally, works offline);
* ``GET /api/state`` — the table snapshot (game, scoreboard, turn, allowed actions, last/pending throw);
* ``GET /api/presets`` — the rule presets; ``GET /api/games`` — stored games;
* ``POST /api/games`` — new game ``{"players": [...], "preset": "classic", "overrides": {...}}``;
* ``POST /api/games/{id}/bank|keep|fix|confirm|discard|undo|throw`` — controls;
* ``GET /api/games/{id}/history`` — turns, throws, actions, corrections;
* ``GET /api/throws/{id}/image.jpg`` — the settled frame (``?thumb=1`` for the thumbnail);
* ``GET /video.mjpg`` — multipart MJPEG live view with overlays; ``GET /snapshot.jpg`` — one frame;
* ``WS /ws`` — the snapshot pushed on every change; accepts commands ``{"cmd": "bank", ...}``;
* ``GET/PUT /api/settings`` — source, zones (normalised polygons), thresholds.

Errors are JSON ``{"error": English, "error_ru": Russian, "status": code}``: unknown game → 404, an
action the rules forbid → 409 with the engine's reason, malformed input → 422.

Access: bound to a loopback address, every client may control the game. Bound elsewhere
(``--host 0.0.0.0``) anyone may watch, but control actions (POST/PUT, WebSocket commands) need the PIN
(header ``X-Kosti-Pin`` or query ``?pin=``), printed at start-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
import os
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, field_validator

from kosti.dashboard.store import Store
from kosti.dashboard.table import TableError, TableService, encode_jpeg, list_presets, placeholder_frame

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).resolve().parent / "static"
LOOPBACK = {"127.0.0.1", "localhost", "::1", "127.0.1.1"}


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
        pin: control PIN (4–6 digits); ``None`` = a random 4-digit PIN when one is needed.
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

    @property
    def pin_required(self) -> bool:
        """True when bound to a non-loopback address."""
        return self.host not in LOOPBACK


# ---------------------------------------------------------------------------------------------------
# Request models
# ---------------------------------------------------------------------------------------------------
class NewGame(BaseModel):
    """New game: player names in seat order (the first throws first), preset name, parameter overrides."""

    model_config = ConfigDict(extra="forbid")
    players: list[str] = Field(min_length=1, max_length=12, examples=[["Ann", "Boris"]])
    preset: str = Field("classic", examples=["classic"])
    overrides: dict[str, Any] | None = Field(None, examples=[{"opening": {"threshold": 75}}])

    @field_validator("players")
    @classmethod
    def _names(cls, v: list[str]) -> list[str]:
        names = [n.strip() for n in v]
        if any(not n for n in names):
            raise ValueError("player names must not be empty")
        if len(set(names)) != len(names):
            raise ValueError("player names must be unique")
        return names


class KeepBody(BaseModel):
    """Dice (faces 1–6) to set aside from the last throw."""

    model_config = ConfigDict(extra="forbid")
    faces: list[int] = Field(min_length=1, max_length=6)


class FixBody(BaseModel):
    """Correct die ``die_index`` (0-based; = number of dice to add a missed die) to ``value`` (1–6)."""

    model_config = ConfigDict(extra="forbid")
    die_index: int = Field(ge=0, le=11)
    value: int = Field(ge=1, le=6)


class ConfirmBody(BaseModel):
    """Confirm the pending throw, optionally giving all its faces (1–6)."""

    model_config = ConfigDict(extra="forbid")
    faces: list[int] | None = Field(None, min_length=1, max_length=6)


class ThrowBody(BaseModel):
    """Virtual table: throw the dice the state asks for, or force these faces."""

    model_config = ConfigDict(extra="forbid")
    faces: list[int] | None = Field(None, min_length=1, max_length=6)


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
    source: str | None = None
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

        return Zones.from_dict(v).to_dict()  # ValueError → 422 with the reason


# ---------------------------------------------------------------------------------------------------
# App
# ---------------------------------------------------------------------------------------------------
class PinGuard:
    """Checks the control PIN; after ``max_failures`` wrong PINs from one address within ``window_s``
    seconds that address is refused (429) for ``window_s`` seconds, so a 4-digit PIN cannot be guessed
    by trying them all."""

    def __init__(self, pin: str | None, max_failures: int = 5, window_s: float = 60.0) -> None:
        self.pin = pin
        self.max_failures, self.window_s = max_failures, window_s
        self._fails: dict[str, list[float]] = {}

    def check(self, who: str, given: Any) -> None:
        """Raise :class:`TableError` 403 (wrong or missing PIN) or 429 (too many wrong PINs)."""
        now = time.monotonic()
        recent = [t for t in self._fails.get(who, []) if now - t < self.window_s]
        self._fails[who] = recent
        if len(recent) >= self.max_failures:
            raise TableError(429, f"too many wrong PINs: wait {self.window_s:.0f} s",
                             f"слишком много неверных PIN: подождите {self.window_s:.0f} с")
        if given is None or self.pin is None or not secrets.compare_digest(str(given), str(self.pin)):
            if given:  # an attempt, not just a viewer pressing a button without a PIN
                recent.append(now)
            raise TableError(403, "control needs the PIN shown when the dashboard started",
                             "для управления нужен PIN, показанный при запуске")


def _make_pin() -> str:
    return f"{secrets.randbelow(9000) + 1000}"


def create_app(config: DashboardConfig | None = None) -> FastAPI:
    """Build the dashboard app for ``config`` (see :class:`DashboardConfig`). The table is created at once;
    the capture thread starts with the app's lifespan (``uvicorn`` or ``with TestClient(app)``)."""
    config = config or DashboardConfig()
    if config.pin_required and not config.pin:
        config.pin = _make_pin()
    if config.pin is not None and not (str(config.pin).isdigit() and 4 <= len(str(config.pin)) <= 6):
        raise ValueError("the PIN must be 4–6 digits")
    store = Store(config.db_path)
    source = config.source_obj
    if source is None and config.source:
        from kosti.vision.sources import open_source

        kwargs: dict[str, Any] = dict(config.source_kwargs or {})
        if config.source.strip().lower().startswith("virtual"):
            kwargs.update(auto_every_s=config.auto_throw_s, initial_throw=False)
        source = open_source(config.source, **kwargs)
    table = TableService(store, source=source, reader=config.reader, reader_kind=config.reader_kind,
                         source_spec=config.source or (getattr(source, "kind", None) if source is not None else None))
    table.corrections_dir = Path(config.corrections_dir) if config.corrections_dir is not None else None
    table.reader_reload = config.reader_reload
    if config.settings:
        table.update_settings(dict(config.settings))
    if config.players:
        cur = table.game_id and store.get_game(table.game_id)
        same = cur and cur.players == list(config.players) and cur.rules.get("preset") == (config.preset or "classic") \
            and (cur.rules.get("overrides") or {}) == (config.overrides or {})
        if not same:
            try:
                table.new_game(list(config.players), config.preset or "classic", config.overrides, actor="startup")
            except TableError as exc:
                store.close()
                raise ValueError(exc.en) from None

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
    @app.exception_handler(TableError)
    async def _table_error(request: Request, exc: TableError) -> JSONResponse:
        return JSONResponse(exc.to_json(), status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        parts = []
        for e in exc.errors():
            loc = ".".join(str(x) for x in e.get("loc", ()) if x != "body")
            parts.append(f"{loc or 'body'}: {e.get('msg', 'invalid')}")
        msg = "invalid request: " + "; ".join(parts)
        return JSONResponse({"error": msg, "error_ru": "неверный запрос: " + "; ".join(parts), "status": 422,
                             "detail": _plain_errors(exc.errors())}, status_code=422)

    # -- access ------------------------------------------------------------------------------------
    guard = PinGuard(config.pin)

    def check_pin(request: Request) -> str:
        """Dependency for control routes: returns the actor name; 403 without the right PIN."""
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

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html")

    @app.get("/api", include_in_schema=False, response_class=HTMLResponse)
    def api_reference() -> HTMLResponse:
        """The API as a plain page built from the OpenAPI schema (``/docs`` needs Swagger UI from a CDN;
        this page works offline)."""
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
                "interactive (online): <a href=/docs>/docs</a> · WebSocket <code>/ws</code></p>"
                "<table><tr><th>method</th><th>path</th><th>what</th><th>body</th></tr>" + "".join(rows) + "</table>")
        return HTMLResponse(page)

    # -- read-only API -----------------------------------------------------------------------------
    @app.get("/api/state", summary="The table snapshot")
    def get_state() -> dict[str, Any]:
        return table.snapshot()

    @app.get("/api/presets", summary="Rule presets")
    def get_presets() -> dict[str, Any]:
        return {"presets": list_presets()}

    @app.get("/api/games", summary="Stored games, newest first")
    def get_games(limit: int = Query(50, ge=1, le=500)) -> dict[str, Any]:
        return {"games": [{"id": g.id, "players": g.players, "rules": g.rules, "status": g.status, "winner": g.winner,
                           "created_at": g.created_at, "updated_at": g.updated_at} for g in store.list_games(limit)],
                "current": table.game_id}

    @app.get("/api/games/{game_id}/history", summary="Turns, throws, actions and corrections of a game")
    def get_history(game_id: int) -> dict[str, Any]:
        return table.history(game_id)

    @app.get("/api/throws/{throw_id}/image.jpg", summary="Settled frame of a throw (JPEG)",
             response_class=Response, responses={200: {"content": {"image/jpeg": {}}}})
    def throw_image(throw_id: int, thumb: bool = False) -> Response:
        data = store.throw_image(throw_id, thumbnail=thumb)
        if data is None:
            raise TableError(404, f"no image for throw {throw_id}", f"нет снимка броска {throw_id}")
        return Response(data, media_type="image/jpeg", headers={"Cache-Control": "max-age=86400"})

    # -- controls ----------------------------------------------------------------------------------
    @app.post("/api/games", summary="Start a new game", status_code=201)
    def post_game(body: NewGame, actor: str = Depends(check_pin)) -> dict[str, Any]:
        return table.new_game(body.players, body.preset, body.overrides, actor=actor)

    @app.post("/api/games/{game_id}/bank", summary="Stop (хватит) and record the turn points")
    def post_bank(game_id: int, actor: str = Depends(check_pin)) -> dict[str, Any]:
        return table.bank(game_id, actor=actor)

    @app.post("/api/games/{game_id}/keep", summary="Set aside these scoring dice (presets with a choice)")
    def post_keep(game_id: int, body: KeepBody, actor: str = Depends(check_pin)) -> dict[str, Any]:
        return table.keep(body.faces, game_id, actor=actor)

    @app.post("/api/games/{game_id}/fix", summary="Correct one die of the pending or latest throw")
    def post_fix(game_id: int, body: FixBody, actor: str = Depends(check_pin)) -> dict[str, Any]:
        return table.fix(body.die_index, body.value, game_id, actor=actor)

    @app.post("/api/games/{game_id}/confirm", summary="Confirm the pending (uncertain) throw")
    def post_confirm(game_id: int, body: ConfirmBody | None = None, actor: str = Depends(check_pin)) -> dict[str, Any]:
        return table.confirm(body.faces if body else None, game_id, actor=actor)

    @app.post("/api/games/{game_id}/discard", summary="Drop the pending throw (throw again)")
    def post_discard(game_id: int, actor: str = Depends(check_pin)) -> dict[str, Any]:
        return table.discard(game_id, actor=actor)

    @app.post("/api/games/{game_id}/undo", summary="Undo the latest action")
    def post_undo(game_id: int, actor: str = Depends(check_pin)) -> dict[str, Any]:
        return table.undo(game_id, actor=actor)

    @app.post("/api/games/{game_id}/throw", summary="Virtual table: throw the dice")
    def post_throw(game_id: int, body: ThrowBody | None = None, actor: str = Depends(check_pin)) -> dict[str, Any]:
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
        "bank": lambda a, d: table.bank(d.get("game_id"), actor=a),
        "keep": lambda a, d: table.keep(list(d.get("faces") or []), d.get("game_id"), actor=a),
        "fix": lambda a, d: table.fix(int(d["die_index"]), int(d["value"]), d.get("game_id"), actor=a),
        "confirm": lambda a, d: table.confirm(d.get("faces"), d.get("game_id"), actor=a),
        "discard": lambda a, d: table.discard(d.get("game_id"), actor=a),
        "undo": lambda a, d: table.undo(d.get("game_id"), actor=a),
        "throw": lambda a, d: table.request_throw(d.get("faces"), d.get("game_id")),
    }

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
                    try:
                        data = await websocket.receive_json()
                    except (ValueError, KeyError):
                        await websocket.send_json({"type": "error", "error": "malformed JSON", "error_ru": "неверный JSON"})
                        continue
                    await websocket.send_json(await _ws_command(data))

            async def _ws_command(data: Any) -> dict[str, Any]:
                if not isinstance(data, dict) or data.get("cmd") not in commands:
                    return {"type": "error", "status": 422, "error": f"unknown command; use one of {sorted(commands)}",
                            "error_ru": "неизвестная команда"}
                if config.pin_required:
                    try:
                        guard.check(who, data.get("pin") or conn_pin)
                    except TableError as exc:
                        return {"type": "error", "cmd": data["cmd"], **exc.to_json()}
                actor = f"{'pin' if config.pin_required else 'local'}:{who}"
                try:
                    await run_in_threadpool(commands[data["cmd"]], actor, data)
                except TableError as exc:
                    return {"type": "error", "cmd": data["cmd"], **exc.to_json()}
                except (KeyError, TypeError, ValueError) as exc:
                    return {"type": "error", "cmd": data["cmd"], "status": 422, "error": f"bad command: {exc}",
                            "error_ru": f"неверная команда: {exc}"}
                return {"type": "ack", "cmd": data["cmd"]}

            tasks = [asyncio.create_task(sender()), asyncio.create_task(receiver())]
            done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for t in pending:
                t.cancel()
            for t in done:
                exc = t.exception()
                if exc is not None and not isinstance(exc, (WebSocketDisconnect, RuntimeError)):
                    log.warning("websocket ended: %r", exc)
        except WebSocketDisconnect:
            pass
        finally:
            table.broadcaster.unsubscribe(q)

    return app


def _plain_errors(errors: Any) -> list[dict[str, Any]]:
    out = []
    for e in errors:
        out.append({"loc": [str(x) for x in e.get("loc", ())], "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))})
    return out


def _mount_offline_docs(app: FastAPI) -> None:
    """Serve the interactive OpenAPI docs at ``/docs`` from the ``swagger-ui-bundle`` package's files.

    FastAPI's default ``/docs`` page loads Swagger UI from a CDN and is blank offline; the table's
    Raspberry Pi usually has no internet, so the same page is built here on local copies.
    """
    from fastapi.openapi.docs import get_swagger_ui_html
    from swagger_ui_bundle import swagger_ui_path

    app.mount("/docs-static", StaticFiles(directory=swagger_ui_path), name="docs-static")

    @app.get("/docs", include_in_schema=False)
    async def _docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} — API",
            swagger_js_url="/docs-static/swagger-ui-bundle.js",
            swagger_css_url="/docs-static/swagger-ui.css",
            swagger_favicon_url="/docs-static/favicon-32x32.png",
        )
