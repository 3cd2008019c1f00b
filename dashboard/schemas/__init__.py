"""Request and response models of the dashboard's HTTP and WebSocket API (pydantic).

Request models validate what a client sends (the same model for a REST body and for a WebSocket command's
fields, :mod:`kosti.dashboard.routes.commands`); response models describe what the routes return, so that
``/openapi.json`` documents every answer. The response models name every field the table's views
(:class:`kosti.dashboard.table.TableService`) put on the wire today; only payloads that are open by nature —
a game's own view (``state``, which differs between 1000, Farkle, Yacht …), an event's parameters, a rule
preset's parameters — allow fields beyond the declared ones (``extra="allow"``). Routes serialise with
``response_model_exclude_unset``: a field a view leaves out (``settled_at`` of a throw not settled this
session, ``code`` of an error) stays out of the JSON, as before.
"""

from __future__ import annotations

import json
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    StringConstraints,
    field_validator,
)

from kosti.dashboard.json_values import JsonObject
from kosti.engine.names import MAX_NAME_LENGTH, MAX_PLAYERS
from kosti.engine.rules import MAX_PARAMETER as MAX_RULE_NUMBER
from kosti.vision.params import live_threshold_field

#: Largest id a route accepts (SQLite's INTEGER is 64-bit signed); a larger one is refused with 422.
MAX_ID = 2**63 - 1
#: Longest player name (characters): a name is shown on a scoreboard row, not stored as a document.
MAX_NAME = MAX_NAME_LENGTH  # the one player-name rule, kosti.engine.names
#: Largest JSON text (characters) and nesting of the free-form fields ``overrides`` and ``zones``.
MAX_FIELD_JSON, MAX_FIELD_DEPTH = 4096, 6

Face = Annotated[int, Field(ge=1, le=6)]
PlayerName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_NAME)]


def small_json(v: JsonValue, name: str, max_number: float | None = None) -> JsonValue:
    """``v`` when its JSON text is at most :data:`MAX_FIELD_JSON` characters, nested at most
    :data:`MAX_FIELD_DEPTH` deep, and (with ``max_number``) every number is finite with ``|x| ≤ max_number``;
    else ``ValueError`` (→ 422 with the reason)."""

    def walk(x: JsonValue, depth: int) -> None:
        if depth > MAX_FIELD_DEPTH:
            raise ValueError(f"{name} is nested more than {MAX_FIELD_DEPTH} levels deep")
        if isinstance(x, dict):
            for k, y in x.items():
                walk(k, depth + 1)
                walk(y, depth + 1)
        elif isinstance(x, list):
            for y in x:
                walk(y, depth + 1)
        elif isinstance(x, int | float) and not isinstance(x, bool) and max_number is not None \
                and not (abs(x) <= max_number):  # also NaN and ±inf
            raise ValueError(f"{name}: the number {x!r:.30} is out of range (|x| ≤ {max_number:g})")

    walk(v, 0)
    if len(json.dumps(v, ensure_ascii=False)) > MAX_FIELD_JSON:
        raise ValueError(f"{name} is longer than {MAX_FIELD_JSON} characters of JSON")
    return v


# ---------------------------------------------------------------------------------------------------
# Requests
# ---------------------------------------------------------------------------------------------------
class NewGame(BaseModel):
    """New game: player names in seat order (the first throws first), preset name, parameter overrides.
    ``replace``: put aside the unfinished game on the table (without it such a request is refused, 409
    ``replace_needed``). Names are checked by :meth:`TableService.new_game` (a reason in both languages)."""

    model_config = ConfigDict(extra="forbid")
    players: list[PlayerName] = Field(min_length=1, max_length=MAX_PLAYERS, examples=[["Ann", "Boris"]])
    preset: str = Field("classic", min_length=1, max_length=40, examples=["classic"])
    overrides: JsonObject | None = Field(None, examples=[{"opening": {"threshold": 75}}])
    replace: bool = False

    @field_validator("overrides")
    @classmethod
    def _overrides(cls, v: JsonObject | None) -> JsonObject | None:
        if v is not None:
            small_json(v, "overrides", max_number=MAX_RULE_NUMBER)
        return v


class ReplaceBody(BaseModel):
    """``replace``: put aside the unfinished game on the table (resume, rematch)."""

    model_config = ConfigDict(extra="forbid")
    replace: bool = False


class KeepBody(BaseModel):
    """Dice (faces 1–6) to set aside from the last throw."""

    model_config = ConfigDict(extra="forbid")
    faces: list[Face] = Field(min_length=1, max_length=6)


class ChooseBody(BaseModel):
    """A game's own choice (games.md games): ``key`` is one of the game's choices, ``value`` a JSON value."""

    model_config = ConfigDict(extra="forbid")
    key: str = Field(min_length=1, max_length=40, examples=["op"])
    value: JsonValue = Field(None, examples=["plus"])


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
    checked against the current pair by :func:`kosti.dashboard.table_settings.check_settle`; ``[settle]
    motion_fraction`` / ``still_fraction`` in kosti.toml). Bounds and descriptions are the declared ones
    (:data:`kosti.vision.params.LIVE_THRESHOLDS`); ``None`` leaves a threshold as it is."""

    model_config = ConfigDict(extra="forbid")
    conf: float | None = live_threshold_field("conf")
    value_conf: float | None = live_threshold_field("value_conf")
    still_s: float | None = live_threshold_field("still_s")
    motion_fraction: float | None = live_threshold_field("motion_fraction")
    still_fraction: float | None = live_threshold_field("still_fraction")


class SettingsBody(BaseModel):
    """Settings to change: ``source`` spec, ``zones`` (``{"roll_area": [[x, y], ...], "set_aside": ...}``,
    normalised 0–1), ``thresholds``, live view width (px) and JPEG quality, ``rotate`` (degrees clockwise)."""

    model_config = ConfigDict(extra="forbid")
    source: str | None = Field(None, min_length=1, max_length=2048)
    zones: JsonObject | None = None
    thresholds: Thresholds | None = None
    live_width: int | None = Field(None, ge=160, le=3840)
    jpeg_quality: int | None = Field(None, ge=20, le=95)
    rotate: Literal[0, 90, 180, 270] | None = Field(None, description=(
        "turn the camera's frames clockwise by this many degrees (a camera mounted sideways or upside down; at an "
        "angle, the far side of the table at the top); the marked zones turn with the picture"))
    record: bool | None = Field(None, description=(
        "keep the camera stream around each throw as a short clip with the throw the game recorded beside it "
        "(kosti run --record; `kosti watch --truth` scores the table on them)"))
    record_mb: float | None = Field(None, ge=10, le=100000, description="size cap of the clips folder, megabytes")

    @field_validator("rotate", mode="before")
    @classmethod
    def _rotate_int(cls, v: object) -> object:  # 90.0 is 90, stored as an integer
        from kosti.vision.frame_source import loose_rotation

        return loose_rotation(v)

    @field_validator("zones")
    @classmethod
    def _zones(cls, v: JsonObject | None) -> JsonObject | None:
        if v is None:
            return v
        from kosti.vision.zones import Zones

        small_json(v, "zones")
        return Zones.from_dict(v).to_dict()  # ValueError → 422 with the reason


class WsCommand(BaseModel):
    """A WebSocket command's envelope: ``cmd``, the game it is for (like the REST path), the PIN; the rest of the
    message is the command's body, validated with the same model as the REST route
    (:data:`kosti.dashboard.routes.commands.COMMANDS`)."""

    model_config = ConfigDict(extra="allow")
    cmd: str = Field(max_length=20)
    game_id: int | None = Field(None, ge=1, le=MAX_ID)
    pin: str | None = Field(None, max_length=12)


# ---------------------------------------------------------------------------------------------------
# Responses
# ---------------------------------------------------------------------------------------------------
class RecordedGameFile(BaseModel):
    """``GET /api/games/{id}/export?format=json``: the recorded game of ``cli.md`` (``kosti replay GAME.json``):
    ``rules`` (a preset name, or ``{"preset", "overrides"}``), ``players`` in seat order, ``events`` in order
    (``{"roll": [faces]}``, ``{"keep": [faces]}``, ``{"bank": true}``)."""

    rules: str | JsonObject
    players: list[str]
    events: list[JsonObject]


class HealthReport(BaseModel):
    """``GET /healthz`` (200 when ``ok``, else 503): ``status`` ``"ok"`` | ``"failing"``, the names of the failing
    checks, and each check's own document (``camera``, ``database``, ``disk``; each with ``ok``;
    :func:`kosti.dashboard.health.health`)."""

    ok: bool
    status: Literal["ok", "failing"]
    failing: list[str]
    camera: JsonObject
    database: JsonObject
    disk: JsonObject


class ErrorBody(BaseModel):
    """Every error: ``{"error": English, "error_ru": Russian, "status": HTTP status}``, plus ``code`` (a machine
    name such as ``replace_needed``) where the page reacts, ``detail`` (the validator's own list) on a 422."""

    error: str
    error_ru: str
    status: int
    code: str | None = None
    detail: list[JsonObject] | None = None


class Text(BaseModel):
    """A text in both languages."""

    en: str
    ru: str


class EventView(BaseModel):
    """One engine event (``GameEvent.to_json()``): ``kind``, ``player``, ``points``, ``faces`` and the sentence in
    both languages; some kinds carry more parameters (open)."""

    model_config = ConfigDict(extra="allow")
    kind: str
    player: str | None = None
    points: int | None = None
    faces: list[int] | None = None
    text_en: str
    text_ru: str


class ScoreChange(BaseModel):
    """A player's recorded score before and after an action."""

    player: str
    before: int
    after: int


class ThrowView(BaseModel):
    """A stored throw: faces (0 = unread), the reader's confidences and boxes (px), its status and reasons,
    what became of it (``resolution``; ``outcome`` ``scored``/``bust`` and ``points`` once scored), the
    settled frame's URL; ``settled_at`` (epoch s) only on the latest throw of this session; ``fixable`` only on the
    snapshot's ``last_throw``: whether Fix can still change it (it is the game's latest action; not after a Stop). A throw with no
    database row (``resolution`` ``ignored``: no game; ``not stored``: the write failed) has ``id`` null and
    none of the stored throw's fields (``turn_no`` … ``events``)."""

    id: int | None
    faces: list[int]
    confidences: list[float]
    boxes: list[list[float]]
    status: str
    reasons: list[str]
    resolution: str
    player: str | None
    image_url: str | None
    turn_no: int | None = None
    created_at: float | None = None
    source: str | None = None
    outcome: str | None = None
    points: int | None = None
    events: list[EventView] | None = None
    settled_at: float | None = None
    fixable: bool | None = None


class GameInfo(BaseModel):
    """The game on the table: id, rules (``{"preset", "overrides"}``), players, status, start time."""

    id: int
    rules: JsonObject
    players: list[str]
    status: str
    created_at: float | None
    winner: str | None = None


class PlayerView(BaseModel):
    """A player on the scoreboard: name and score; each game adds its own fields (bolts, barrel, pit …)."""

    model_config = ConfigDict(extra="allow")
    name: str
    score: int | float


class GameView(BaseModel):
    """The game's own view (open: each game of games.md adds its fields): game name, whether it is over,
    the winner, the players and, for the 1000 family, the turn, the allowed actions and the rules line."""

    model_config = ConfigDict(extra="allow")
    game: str
    over: bool
    winner: str | list[str] | None = None  # a list for a shared result (a drawn Chicago or High dice game)
    players: list[PlayerView]


class SourceInfo(BaseModel):
    """The frame source: kind, spec (credentials hidden), whether it is a virtual table, frames per second,
    status (``ok``/``error``/``none`` or the source's status object), the settle detector's motion."""

    kind: str
    spec: str | None
    virtual: bool
    status: str | JsonObject
    fps: float
    motion: str | None = None
    message: str | None = None
    why: str | None = Field(None, description="why there is no picture, in words, and when kosti tries again "
                                              "(kosti.dashboard.source_words); None while frames arrive")
    why_ru: str | None = Field(None, description="the same in Russian")
    rotate: int = Field(0, description="degrees clockwise the frames are turned ([source] rotate)")
    turn_hint: int | None = Field(None, description=(
        "the turn (degrees clockwise, to set as rotate) that would put the far side of the table at the top, when "
        "the perspective of the last settled throws says the picture is the wrong way up; null otherwise"))


class StorageInfo(BaseModel):
    """``ok``, or the error the database gives while it cannot be written (disk full, read-only)."""

    ok: bool
    error: str | None = None
    error_ru: str | None = None
    status: int | None = None


class Banner(BaseModel):
    """What the latest action did that the whole table must see (bust, bolt, dump truck, pit, win …)."""

    id: int
    kind: str
    player: str | None
    created_at: float
    lost: int | None
    events: list[EventView]
    changes: list[ScoreChange]


class BankPreview(BaseModel):
    """What Stop would do now (computed on a copy): events, score changes, and ``warn`` when it costs points."""

    events: list[EventView]
    changes: list[ScoreChange]
    warn: bool


class Snapshot(BaseModel):
    """Everything the dashboard shows (``type: "state"``; also the WebSocket's push): the game, its view,
    the turn number, the latest and the pending throw, recent events, the source, reader and storage."""

    type: str = Field(examples=["state"])
    version: int
    game: GameInfo | None
    state: GameView | None
    turn_no: int | None
    last_throw: ThrowView | None
    pending: ThrowView | None
    events: list[EventView]
    error: str | None
    source: SourceInfo
    reader: str | None
    pin_required: bool
    review_url: str | None
    storage: StorageInfo
    banner: Banner | None
    bank_preview: BankPreview | None
    server_time: float


class Preset(BaseModel):
    """A rule preset (cli.md ``kosti rules``): name, game, dice, target, description and its parameters; the
    1000 family adds the rules line (``summary``), the games of games.md their rules pages (``rules_en``,
    ``rules_ru``) and ``source``; every preset has its human name (``title`` / ``title_ru``) and
    ``description_ru``."""

    name: str
    game: str
    dice: int
    target: int | float | None
    description: str
    parameters: JsonObject
    title: str | None = None
    title_ru: str | None = None
    summary: list[Text] | None = None
    description_ru: str | None = None
    source: str | None = None
    rules_en: str | None = None
    rules_ru: str | None = None


class Presets(BaseModel):
    """The rule presets."""

    presets: list[Preset]


class GameSummary(BaseModel):
    """A stored game in the list of games: players, rules, status, winner, scores, turn count."""

    id: int
    players: list[str]
    rules: JsonObject
    status: str
    winner: str | None
    created_at: float
    updated_at: float
    scores: dict[str, int | float]
    turns: int
    current: bool


class Games(BaseModel):
    """Stored games, newest first, and the id of the game on the table."""

    games: list[GameSummary]
    current: int | None


class TurnRow(BaseModel):
    """A stored turn: who, when, the score before and after, the outcome (``bank``, ``bust`` …)."""

    id: int
    game_id: int
    turn_no: int
    player: str
    started_at: float
    ended_at: float | None
    score_before: int | float | None
    score_after: int | float | None
    outcome: str | None


class ActionRow(BaseModel):
    """A stored action (throw, keep, bank, choose …) with its events; ``undone`` once undone."""

    id: int
    kind: str
    payload: JsonValue
    player: str | None
    turn_no: int | None
    actor: str | None
    events: list[EventView]
    throw_id: int | None
    undone: bool
    created_at: float


class CorrectionRow(BaseModel):
    """A die the table corrected: which throw and die, the old and the new value, who."""

    id: int
    throw_id: int
    game_id: int
    created_at: float
    die_index: int
    old_value: int | None
    new_value: int | None
    actor: str | None


class SheetNote(BaseModel):
    """A change of a player's score during someone else's turn (an overtaking fine, a fall, a pit)."""

    kind: str
    delta: int | float
    after: int | float
    by: str | None
    text_en: str
    text_ru: str


class SheetCell(BaseModel):
    """One player's cell of a round: score after the turn, points this turn, outcome, notes."""

    score: int | float | None
    delta: int | float | None
    outcome: str | None
    notes: list[SheetNote]
    after_note: int | float | None = None


class SheetRow(BaseModel):
    """One round of the score sheet: a cell per player who played in it."""

    round: int
    cells: dict[str, SheetCell]


class ScoreSheet(BaseModel):
    """The paper score sheet: players in seat order, one row per round."""

    players: list[str]
    rows: list[SheetRow]


class History(BaseModel):
    """A game's turns, throws, actions and corrections, and its score sheet."""

    game: GameInfo
    turns: list[TurnRow]
    throws: list[ThrowView]
    actions: list[ActionRow]
    corrections: list[CorrectionRow]
    sheet: ScoreSheet


class ThresholdValues(BaseModel):
    """The reader and settle thresholds in use (see :class:`Thresholds`)."""

    model_config = ConfigDict(extra="allow")
    conf: float | None = None
    value_conf: float | None = None
    still_s: float | None = None
    motion_fraction: float | None = None
    still_fraction: float | None = None


class SettingsView(BaseModel):
    """The table's settings: source spec (credentials hidden), zones, thresholds, live view size and quality, the
    frames' turn (``rotate``);
    a setting an earlier version stored under another key is passed through (open)."""

    model_config = ConfigDict(extra="allow")
    source: str | None
    zones: JsonObject | None
    thresholds: ThresholdValues
    live_width: int | None
    jpeg_quality: int | None
    rotate: int | None = Field(None, description=(
        "degrees clockwise the camera's frames are turned (0, 90, 180 or 270); null on the virtual table or "
        "without a camera, whose picture is never turned"))
    record: bool = Field(False, description="each throw is kept as a short labelled clip (issue 40)")
    record_mb: float = Field(500.0, description="size cap of the clips folder, megabytes")
    record_dir: str | None = Field(None, description="where the clips go")


class ThrowRequested(BaseModel):
    """The virtual table was asked to throw ``requested`` dice (or exactly ``faces``)."""

    requested: int
    faces: list[int] | None


#: What a control answers: the snapshot after it, or (``throw``) what was asked of the virtual table.
ControlResult = Snapshot | ThrowRequested
