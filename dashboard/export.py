"""Games out of the box and back in: a stored game as the recorded-game JSON of ``cli.md`` (which ``kosti replay``
and ``kosti advise`` read), as a CSV score sheet, or as a zip with both and the throws' photos; and a recorded
game put back into the database (:func:`import_game`).

* :func:`game_record` — ``{"rules", "players", "events"}`` exactly as ``shared/docs/cli.md`` ("kosti replay")
  defines it: ``rules`` a preset name (or ``{"preset", "overrides"}`` when the table changed rules), the seat
  order, then one event per live action of the action log, oldest first — ``{"roll": [faces]}``,
  ``{"keep": [faces]}``, ``{"bank": true}`` or a game's own choice ``{KEY: VALUE}``. Undone actions and
  replaced throws are left out (the log marks them ``undone``), so the record replays to the stored state.
* :func:`game_csv` — the score sheet as CSV (UTF-8 with a byte-order mark, so a spreadsheet shows Cyrillic names
  as they are): one row per turn, a column per player (the recorded score after that turn) and the turn's
  throws, points, outcome and events in English and Russian (:data:`CSV_FIXED_COLUMNS`).
* :func:`game_zip` — ``game.json``, ``game.csv`` and ``photos/throw-<id>.jpg`` for every throw with a settled
  frame.
* :func:`import_game` — validates a record by replaying it through the engine (the first refused event names
  itself, and nothing is written), then stores the game with every action, its states and its turns in one
  transaction (:meth:`kosti.dashboard.store.Store.import_game`).

Errors: :class:`ExportError` (``exit_code`` 2; HTTP 422 through the dashboard's :class:`~kosti.dashboard.errors.Invalid`
when a route raises it) with one line naming what is wrong.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from collections.abc import Sequence
from typing import Any

from kosti.dashboard.json_values import JsonObject, JsonValue, json_faces
from kosti.dashboard.store import SETUP_OUTCOME, ActionRow, ImportedAction, Store
from kosti.dashboard.views import score_of, state_from_json, state_to_json
from kosti.engine.errors import BadInput

#: The columns of :func:`game_csv` before the players' columns and after them (the players' names sit between).
CSV_FIXED_COLUMNS: tuple[str, ...] = ("turn", "round", "player", "throws", "turn_points", "outcome")
CSV_TAIL_COLUMNS: tuple[str, ...] = ("events", "events_ru")
#: Largest archive member :func:`read_game_file` reads from a zip (the game's JSON; photos are skipped).
MAX_RECORD_BYTES = 16 * 2**20
#: The action kinds of the action log and the replay event each one is (``cli.md``, "kosti replay").
EVENT_OF_KIND = ("roll", "keep", "bank", "choose")


class ExportError(ValueError):
    """A game cannot be exported or imported: ``exit_code`` 2 on the command line; the message is one line."""

    exit_code = 2


def _event(action: ActionRow) -> dict[str, JsonValue]:
    """The replay event (``cli.md``) of one stored action."""
    p = action.payload
    if action.kind == "roll":
        return {"roll": list(json_faces(p.get("faces")))}
    if action.kind == "keep":
        return {"keep": list(json_faces(p.get("faces")))}
    if action.kind == "bank":
        return {"bank": True}
    if action.kind == "choose" and isinstance(p.get("key"), str):
        return {str(p["key"]): p.get("value")}
    raise ExportError(f"action {action.id} of game {action.game_id} is of an unknown kind {action.kind!r}")


def game_record(store: Store, game_id: int) -> dict[str, JsonValue]:
    """Game ``game_id`` as a recorded game of ``cli.md`` (``{"rules", "players", "events"}``; see the module
    docstring). Raises :class:`ExportError` when there is no such game."""
    g = store.get_game(game_id)
    if g is None:
        raise ExportError(f"no game {game_id} in {store.path}")
    preset = g.rules.get("preset", "classic")
    overrides = g.rules.get("overrides") or {}
    rules: JsonValue = {"preset": preset, "overrides": overrides} if overrides else preset
    return {"rules": rules, "players": list(g.players), "events": [_event(a) for a in store.actions(game_id)]}


def _faces_text(faces: Sequence[int]) -> str:
    return " ".join(str(f) for f in faces)


def csv_rows(store: Store, game_id: int) -> tuple[list[str], list[list[JsonValue]]]:
    """The header and the rows of :func:`game_csv`: one row per turn that has at least one live action, oldest
    first (an order or set-up throw, :data:`~kosti.dashboard.store.SETUP_OUTCOME`, is no turn and has no row). ``throws`` lists the turn's throws (``"1 5 3 3 4; 5 5 2"``, with ``keep …`` and ``stop`` between them as
    played), ``turn_points`` the mover's recorded score change, and each player's column the recorded score
    after the turn. Raises :class:`ExportError` for an unknown game."""
    g = store.get_game(game_id)
    if g is None:
        raise ExportError(f"no game {game_id} in {store.path}")
    by_turn: dict[int, list[ActionRow]] = {}
    for a in store.actions(game_id):
        by_turn.setdefault(a.turn_no, []).append(a)
    turns = {int(str(t["turn_no"])): t for t in store.turns(game_id)}
    seats = {n: i for i, n in enumerate(g.players)}
    header = [*CSV_FIXED_COLUMNS, *g.players, *CSV_TAIL_COLUMNS]
    rows: list[list[JsonValue]] = []
    round_no, prev_seat = 0, None
    for turn_no in sorted(by_turn):
        if turns.get(turn_no, {}).get("outcome") == SETUP_OUTCOME:
            continue  # an order / set-up throw (Pig, Aces, Buck dice) is no one's turn: not a row of the sheet
        acts = by_turn[turn_no]
        mover = acts[0].player or str(turns.get(turn_no, {}).get("player") or "")
        seat = seats.get(mover, 0)
        if prev_seat is None or seat <= prev_seat:
            round_no += 1
        prev_seat = seat
        steps: list[str] = []
        for a in acts:
            ev = _event(a)
            (key, value), = ev.items()
            if key == "roll":
                steps.append(_faces_text(json_faces(value)))
            elif key == "keep":
                steps.append("keep " + _faces_text(json_faces(value)))
            elif key == "bank":
                steps.append("stop")
            else:
                steps.append(f"{key} {json.dumps(value, ensure_ascii=False)}")
        before = state_from_json(acts[0].state_before_json)
        after = state_from_json(acts[-1].state_after_json)
        names = list(after.player_names)
        points = score_of(after, mover) - score_of(before, mover) if mover in names else ""
        outcome = turns.get(turn_no, {}).get("outcome") or ""
        events = [e for a in acts for e in a.events if e.get("kind") != "turn"]
        rows.append([turn_no, round_no, mover, "; ".join(steps), points, outcome,
                     *[score_of(after, n) if n in names else "" for n in g.players],
                     " | ".join(str(e.get("text_en", "")) for e in events),
                     " | ".join(str(e.get("text_ru", "")) for e in events)])
    return header, rows


def game_csv(store: Store, game_id: int) -> str:
    """The score sheet of game ``game_id`` as CSV text (``csv`` module, comma, a byte-order mark first so that a
    spreadsheet reads it as UTF-8); columns :data:`CSV_FIXED_COLUMNS`, one per player, :data:`CSV_TAIL_COLUMNS`."""
    header, rows = csv_rows(store, game_id)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(header)
    w.writerows(rows)
    return "\ufeff" + buf.getvalue()


def game_zip(store: Store, game_id: int) -> bytes:
    """A zip of game ``game_id``: ``game.json`` (:func:`game_record`), ``game.csv`` (:func:`game_csv`) and the
    settled frame of every throw that has one as ``photos/throw-<id>.jpg``."""
    record = game_record(store, game_id)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("game.json", json.dumps(record, ensure_ascii=False, indent=1))
        z.writestr("game.csv", game_csv(store, game_id))
        for t in store.throws(game_id):
            if not t.has_image:
                continue
            jpeg = store.throw_image(t.id)
            if jpeg is not None:
                z.writestr(zipfile.ZipInfo(f"photos/throw-{t.id}.jpg"), jpeg, zipfile.ZIP_STORED)
    return buf.getvalue()


def read_game_file(data: bytes, name: str = "game file") -> Any:
    """The recorded game in ``data``: a JSON document, or the ``game.json`` of a zip made by :func:`game_zip`.
    Raises :class:`ExportError` (one line naming ``name``) for anything else."""
    if data[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                info = z.getinfo("game.json")
                if info.file_size > MAX_RECORD_BYTES:
                    raise ExportError(f"{name}: game.json is larger than {MAX_RECORD_BYTES // 2**20} MB")
                data = z.read(info)
        except KeyError:
            raise ExportError(f"{name}: a zip without game.json is no exported game") from None
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise ExportError(f"{name}: damaged zip ({exc})") from None
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ExportError(f"{name}: not UTF-8 text") from None
    except (ValueError, RecursionError) as exc:
        raise ExportError(f"{name}: malformed JSON ({str(exc).splitlines()[0]})") from None


def _rules_spec(rules: Any) -> JsonObject:
    """The games row's rules spec ``{"preset", "overrides"}`` of a record's ``rules`` (a name or that object)."""
    if isinstance(rules, str):
        return {"preset": rules, "overrides": {}}
    if isinstance(rules, dict) and isinstance(rules.get("preset"), str) and set(rules) <= {"preset", "overrides"}:
        overrides = rules.get("overrides") or {}
        if not isinstance(overrides, dict):
            raise ExportError("rules.overrides: expected an object of rule parameters")
        return {"preset": rules["preset"], "overrides": overrides}
    raise ExportError("rules: expected a preset name or {\"preset\": name, \"overrides\": {...}}")


class _Recorder(Store):
    """Stands in for the database while :meth:`GameSession._apply <kosti.dashboard.session.GameSession>` replays a
    record (:func:`plan_import`): it keeps each action the session would store, with the session's own turn
    bookkeeping, and opens no file. Any other write the session tried would fail loudly (no connection)."""

    def __init__(self) -> None:  # no database, no connection
        self.path = "(import)"
        self.write_error = None
        self.recorded: list[ImportedAction] = []

    def record_action(self, game_id: int, kind: str, payload: dict[str, JsonValue], *, player: str | None,
                      turn_no: int, state_before_json: str, state_after_json: str, events: list[dict[str, JsonValue]],
                      actor: str | None = None, throw_id: int | None = None, throw_resolution: str | None = None,
                      turn_end: dict[str, JsonValue] | None = None, next_turn: dict[str, JsonValue] | None = None,
                      status: str = "active", winner: str | None = None, supersedes: int | None = None) -> int:
        self.recorded.append(ImportedAction(kind=kind, payload=payload, player=player, turn_no=turn_no,
                                            state_before_json=state_before_json, state_after_json=state_after_json,
                                            events=events, turn_end=turn_end, next_turn=next_turn))
        return len(self.recorded)


def plan_import(doc: Any) -> tuple[JsonObject, list[str], str, list[ImportedAction], str, str | None]:
    """Replay a recorded game (``cli.md``) through the table's own session (:class:`~kosti.dashboard.session.GameSession`,
    so the turns are kept exactly as on the table) and return what the store keeps of it: ``(rules spec, players,
    initial state JSON, actions, status, winner)``; ``status`` is ``finished`` for a game that has ended, else
    ``abandoned`` (put aside: it can be resumed from the list of games, and the game on the table stays). Nothing is
    written.

    Raises :class:`ExportError` with one line: not a record, a mid-game start (``scores``/``state``, which the
    dashboard's games never have), a malformed event, or an event the rules forbid (named by its index)."""
    from kosti.dashboard.errors import TableError
    from kosti.dashboard.session import GameSession
    from kosti.engine.replay_doc import game_from_record

    if not isinstance(doc, dict):
        raise ExportError("the game file must hold a JSON object {\"rules\", \"players\", \"events\"}")
    scores = doc.get("scores") or {}
    if (isinstance(scores, dict) and any(scores.values())) or doc.get("state"):
        raise ExportError("a game that starts mid-way (scores or state) cannot be imported: the dashboard's games "
                          "start at zero")
    spec = _rules_spec(doc.get("rules", "classic"))
    try:
        first, events = game_from_record(doc)
    except (BadInput, KeyError) as exc:
        raise ExportError(str(exc).strip("'\"")) from None
    recorder = _Recorder()
    session = GameSession(recorder)
    session.game_id, session.rules_spec, session.state, session.turn_no = 0, spec, first, 1
    initial = session.state
    for i, raw in enumerate(events):
        state = session.state
        try:
            action = state.parse_action(raw)
        except BadInput as exc:
            raise ExportError(f"event {i}: {exc}") from None
        (key, value), = raw.items()
        kind = key if key in ("roll", "keep", "bank") else "choose"
        payload: JsonObject = {"faces": list(value)} if kind in ("roll", "keep") else (
            {} if kind == "bank" else {"key": key, "value": value})
        if state.over:
            raise ExportError(f"event {i}: the game is already over")
        try:
            session._apply(kind, action, payload, "import")
        except TableError as exc:
            why = "the rules forbid it: " if exc.status == 409 else ""
            raise ExportError(f"event {i}: {why}{exc.en}") from None
    final = session.state
    winner = final.winner
    return (spec, list(initial.player_names), state_to_json(initial), recorder.recorded,
            "finished" if final.over else "abandoned",
            winner if isinstance(winner, str) or winner is None else ", ".join(winner))


def import_game(store: Store, doc: Any) -> int:
    """Put the recorded game ``doc`` (``cli.md``) into ``store`` after replaying it (:func:`plan_import`); returns
    the new game's id. A record the engine refuses raises :class:`ExportError` and writes nothing; the writes are
    one transaction (:meth:`Store.import_game`)."""
    spec, players, initial_json, actions, status, winner = plan_import(doc)
    initial = state_from_json(initial_json)
    opener = initial.to_move or players[0]
    return store.import_game(spec, players, initial_json, (opener, score_of(initial, opener)), actions,
                             status=status, winner=winner)
