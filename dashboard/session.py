"""The game session: the game on the table, its store, and the pending-throw policy — an application layer
without HTTP (the web layer maps the typed errors of :mod:`kosti.dashboard.errors` to statuses).

:class:`GameSession` owns the game in progress (an immutable engine state), stores every step in
:class:`kosti.dashboard.store.Store`, and is the one place where a throw is accepted, held for confirmation
or refused:

* a camera throw the pipeline marks ``ok`` with a dice count the state allows (:func:`count_mismatch`, the
  one count check) and every die read is applied at once as ``Roll(faces)``;
* any other camera throw is held **pending** — nothing is scored until the table confirms it or corrects it
  (``fix`` a die, ``remove_die``, ``confirm`` with the right faces) or throws again. A silent wrong score is
  never recorded;
* a throw typed in (``enter``) or confirmed is applied, or refused with the reason.

After each change of the state, every listener in :attr:`GameSession.state_listeners` hears the new state
(the table wiring tells the camera runner what to expect, :meth:`kosti.vision.runner.LivePipeline.expect`).
Callers hold :attr:`GameSession.lock` around a call and its snapshot; every method takes it too.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

from kosti.dashboard.errors import Conflict, Invalid, NotFound, TableError
from kosti.dashboard.json_values import JsonObject, JsonValue, json_faces, json_int, json_names
from kosti.dashboard.store import ActionRow, GameRow, Store, ThrowRow
from kosti.dashboard.throws import TableThrow, unstored_view
from kosti.dashboard.views import (
    GameState,
    action_text,
    dice_ru,
    event_json,
    faces_text,
    make_game,
    roll_sizes,
    rules_reason_ru,
    score_of,
    state_from_json,
    state_to_json,
    throw_view,
    turn_outcome,
)
from kosti.engine.errors import BadInput, RuleViolation
from kosti.engine.game import Bank, Keep, Roll
from kosti.engine.games import Choose
from kosti.engine.games.base import GameAction
from kosti.engine.names import PlayerNameError, check_player_names
from kosti.engine.records import Reason
from kosti.engine.titles import preset_title

log = logging.getLogger(__name__)
_P = ParamSpec("_P")
_R = TypeVar("_R")

@dataclass(frozen=True)
class AppliedAction:
    """One engine action the session has applied and stored (:attr:`GameSession.action_listeners`).

    Attributes:
        game_id: the game. kind: ``roll``, ``keep``, ``bank`` or ``choose``. player: who moved (None: nobody to move).
        turn_no: the turn it belongs to (1-based). events: the engine's events as JSON (``kind``, ``player``,
            ``points``, ``faces``, ``text_en``, ``text_ru``, ``outcome``), in order.
        turn_end: ``{"score_after", "outcome"}`` when the action ended the turn, else None.
        next_player: who throws next when the turn passed (None otherwise or at the end).
        over: the game ended with it. winner: the winner(s), comma separated, or None.
        correction: it replaces an applied throw the table fixed (a second, corrected ``roll``).
        faces: the faces thrown (a ``roll``), else empty. state: the engine state after it.
    """

    game_id: int
    kind: str
    player: str | None
    turn_no: int
    events: list[JsonObject]
    turn_end: JsonObject | None
    next_player: str | None
    over: bool
    winner: str | None
    correction: bool
    faces: list[int]
    state: GameState


@dataclass(frozen=True)
class CountMismatch:
    """A throw of ``n`` dice where the state allows only ``sizes`` (:func:`count_mismatch`)."""

    n: int
    sizes: tuple[int, ...]

    def error(self) -> Invalid:
        """The refusal of a typed or confirmed throw (code ``dice_count``)."""
        en, ru = " or ".join(map(str, self.sizes)), " или ".join(map(str, self.sizes))
        return Invalid(f"{en} dice are to be thrown now, not {self.n}",
                       f"сейчас бросают {ru} {dice_ru(self.sizes[-1])}, а не {self.n}", code="dice_count")

    def reason(self) -> str:
        """Why a camera throw is held: ``"saw 4 dice, expected 5 / видно костей: 4, ожидалось: 5"``."""
        return (f"saw {self.n} dice, expected {' or '.join(map(str, self.sizes))} / видно костей: {self.n}, "
                f"ожидалось: {' или '.join(map(str, self.sizes))}")


def count_mismatch(st: GameState, n: int) -> CountMismatch | None:
    """The one throw-count check: ``None`` when a throw of ``n`` dice is one the state allows now
    (:func:`roll_sizes`), else the mismatch. A state that allows no throw is :func:`why_no_throw`'s case."""
    sizes = roll_sizes(st)
    return None if n in sizes else CountMismatch(n, sizes)


def why_no_throw(st: GameState) -> Reason | None:
    """Why no throw is due now (the game waits for a choice: a bet, a claim, the 2–7 die), or None."""
    if roll_sizes(st):
        return None
    m = st.moves()
    return m.why_not_roll or m.hint


def announced(method: Callable[Concatenate[GameSession, _P], _R]) -> Callable[Concatenate[GameSession, _P], _R]:
    """A change of what the table shows: ``method`` runs under :attr:`GameSession.lock` and, unless it raised or
    returned ``False`` (nothing changed), every :attr:`GameSession.change_listeners` entry hears of it, still
    under the lock — so whoever calls the session (a route, the WebSocket, ``kosti watch``, a test) has the
    change shown on every screen, in order."""

    @functools.wraps(method)
    def changing(self: GameSession, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self.lock:
            out = method(self, *args, **kwargs)
            if out is not False:
                for listener in self.change_listeners:
                    try:
                        listener()
                    except Exception:  # noqa: BLE001 - a screen's fault must not undo a recorded action
                        log.exception("change listener %r failed", listener)
            return out

    return changing


class GameSession:
    """The game on the table and its controls (see the module's text).

    Args:
        store: the database; :meth:`resume_latest` puts its latest active game on the table.

    Attributes:
        game_id, rules_spec, state, turn_no: the game on the table (``None`` / 0 without one).
        events: the latest events as JSON, newest last. last_throw: the latest throw's view; last_error:
            the latest refusal of a camera throw (``TableError.to_json()``).
        game_hooks: called with the state whenever a game is put on the table (new, resumed, rematch,
            restored at start-up), under the lock: each must return at once (the advisor starts a thread).
        state_listeners: called with the state (or None) after every change of it, under the lock.
        action_listeners: called with an :class:`AppliedAction` after every engine action is stored, under the
            lock, in order (the MQTT publisher's events); each must return at once.
        change_listeners: called (no arguments) after every change of what the table shows — each control, each
            throw taken, a game put on the table — under the lock (:func:`announced`; the table publishes its
            snapshot); each must return at once.
        corrections_dir: folder where confirmed or corrected throws are saved for retraining, or None.
        model_name: says which reader read the throws (written into saved corrections).
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self.lock = threading.RLock()
        self.game_id: int | None = None
        self.rules_spec: JsonObject = {}
        self.state: GameState | None = None
        self.turn_no = 0
        self.events: deque[JsonObject] = deque(maxlen=30)
        self.last_throw: JsonObject | None = None
        self.last_error: JsonObject | None = None
        self.game_hooks: list[Callable[[GameState], None]] = []
        self.state_listeners: list[Callable[[GameState | None], None]] = []
        self.action_listeners: list[Callable[[AppliedAction], None]] = []
        self.change_listeners: list[Callable[[], object]] = []
        self.corrections_dir: Path | None = None
        #: Whether the settled frames are photos of real dice (a camera, a video, photos). The virtual table's
        #: rendered frames are never saved as training data: a fix typed on a demo would teach the reader a
        #: picture and a label that no table showed (found by the new-user trial of issue 42).
        self.frames_are_real: Callable[[], bool] = lambda: True
        self.model_name: Callable[[], str] = lambda: ""
        #: Dice of the pending throw before each edit (fix / add / remove), newest last, so that Undo
        #: takes back one edit at a time: ``(throw_id, faces, boxes, confidences)``. Kept in memory only.
        self._pending_edits: list[tuple[int, list[int], list[list[float]], list[float]]] = []

    def resume_latest(self) -> None:
        """Put the store's latest active game on the table (start-up), when its state can be read."""
        g = self.store.latest_active_game()
        if g is not None:
            self._load_game(g)

    @announced
    def set_state(self, state: GameState | None) -> None:
        """Replace the state on the table (tests, a restored state) and tell the listeners."""
        with self.lock:
            self.state = state
            self._state_changed()

    def _state_changed(self) -> None:
        for listener in self.state_listeners:
            try:
                listener(self.state)
            except Exception:  # noqa: BLE001 - a listener's fault must not undo a recorded action
                log.exception("state listener %r failed", listener)

    @announced
    def show_unstored(self, thr: TableThrow) -> None:
        """Show a settled throw that could not be stored (nothing was scored; the storage banner says why)."""
        with self.lock:
            self.last_throw = unstored_view(thr, "not stored")

    def expected_dice(self) -> int:
        """Dice the next throw should show: 0 when no game is running or when several counts are legal
        (a keep phase where the player chooses what to set aside — the count tells the engine the keep)."""
        st = self.state
        if st is None or st.over:
            return 0
        sizes = roll_sizes(st)
        return sizes[0] if len(sizes) == 1 else 0

    def throw_due(self, game_id: int | None, faces: list[int] | None) -> GameState:
        """The state, when a throw of ``faces`` (or of the dice to throw) may be thrown now; else Conflict
        (no game, no throw due) or Invalid (a face outside 1–6, a count the state does not allow)."""
        st = self.require(game_id)
        why = why_no_throw(st)
        if why is not None:
            raise Conflict(f"no throw is due now: {why.text_en}", f"сейчас не бросают: {why.text_ru}")
        if faces is not None:
            self._check_count(st, len(faces))
            if any(int(f) not in range(1, 7) for f in faces):
                raise Invalid("each die shows 1–6", "на каждой кости от 1 до 6")
        return st

    def _load_game(self, g: GameRow) -> bool:
        """Put stored game ``g`` (a :class:`GameRow`) on the table: state, turn number, recent events, last
        throw. False (and nothing changed) when its stored state cannot be read."""
        try:
            state = state_from_json(g.state_json)
        except (BadInput, TypeError, ValueError, KeyError, AttributeError) as exc:
            log.error("game %s cannot be restored (%s); not resumed", g.id, exc)
            return False
        self._set_game(g.id, g.rules, state)
        turns = self.store.turns(g.id)
        self.turn_no = max((json_int(t["turn_no"]) for t in turns), default=1)
        self.events.clear()
        for a in self.store.actions(g.id)[-10:]:
            self.events.extend(a.events)
        last = self.store.throws(g.id)
        self.last_throw = throw_view(self.store, last[-1]) if last else None
        self.last_error = None
        self._pending_edits.clear()
        return True

    def _set_game(self, game_id: int, rules_spec: JsonObject, state: GameState) -> None:
        self.game_id, self.rules_spec, self.state = game_id, rules_spec, state
        self._state_changed()
        for hook in self.game_hooks:
            try:
                hook(state)
            except Exception:  # a helper's fault must not stop a game from starting
                log.exception("game hook %r failed", hook)

    def require(self, game_id: int | None) -> GameState:
        """The state of the game on the table when ``game_id`` (None = whichever) names it and it is not over;
        else NotFound (no such game) or Conflict (another game, no game, the game is over)."""
        if game_id is not None and game_id != self.game_id:
            if self.store.get_game(game_id) is None:
                raise NotFound(f"no game {game_id}", f"игры {game_id} нет")
            raise Conflict(f"game {game_id} is not the game on the table (that is {self.game_id})",
                             f"игра {game_id} сейчас не на столе (на столе игра {self.game_id})")
        if self.state is None or self.game_id is None:
            raise Conflict("no game in progress: start a new game", "игра не начата: начните новую игру")
        if self.state.over:
            raise Conflict("the game is over", "игра окончена")
        return self.state

    def running_game(self) -> JsonObject | None:
        """The unfinished game on the table as ``{"id", "players", "turns"}``, or ``None`` (no game, or over)."""
        if self.game_id is None or self.state is None or self.state.over:
            return None
        g = self.store.get_game(self.game_id)
        return {"id": self.game_id, "players": list(g.players) if g else [], "turns": self.turn_no}

    @announced
    def new_game(self, players: list[str], preset: str = "classic", overrides: JsonObject | None = None,
                 actor: str | None = None, replace: bool = False, start: GameState | None = None) -> None:
        """Start a game (``start``: the game already made of ``preset`` — ``kosti watch --rules FILE`` — instead of
        a new one of ``preset`` and ``overrides``).

        An unfinished game on the table is replaced only when ``replace`` is true (it is then kept as
        ``abandoned`` and can be put back with :meth:`resume`); otherwise :class:`Conflict` with code
        ``replace_needed`` — one tap on one phone must not end the game the table is playing.
        Raises :class:`Invalid` for names that break the player-name rule (:func:`check_player_names`, code
        ``players``), an unknown preset or parameter (code ``rules``).
        """
        try:  # the one player-name rule (kosti.engine.names), the same reason in every layer
            names = check_player_names(list(players))
        except PlayerNameError as exc:
            raise Invalid(exc.reason_en, exc.reason_ru, code="players") from None
        try:
            state = start if start is not None else make_game(preset, overrides, names)
        except BadInput as exc:
            raise Invalid(f"these rules cannot be used: {exc}",
                             f"такие правила нельзя применить: {rules_reason_ru(str(exc))}", code="rules") from None
        except KeyError as exc:
            raise Invalid(f"unknown preset or parameter: {exc}", f"неизвестные правила или параметр: {exc}",
                             code="rules") from None
        with self.lock:
            running = self.running_game()
            if running is not None and not replace:
                who = ", ".join(json_names(running["players"]))
                raise Conflict(f"Game {running['id']} ({who}) is still being played: confirm to put it "
                                      "aside (it can be resumed from the list of games)",
                                 f"Игра {running['id']} ({who}) ещё идёт: подтвердите, чтобы отложить её "
                                 "(её можно продолжить из списка игр)", code="replace_needed")
            abandon = json_int(running["id"]) if running is not None else None
            rules: JsonObject = {"preset": preset, "overrides": overrides or {}}
            gid = self.store.create_game(rules, names, state_to_json(state), abandon=abandon,
                                         first_turn=(state.to_move or names[0],
                                                     score_of(state, state.to_move or names[0])))
            self._set_game(gid, rules, state)
            self.turn_no = 1
            self.events.clear()
            self.last_throw = None
            self.last_error = None
            self._pending_edits.clear()
            self.events.append({"kind": "new_game", "player": "", "points": 0, "faces": [],
                                "text_en": f"New game: {', '.join(names)} ({preset_title(preset)[0]})",
                                "text_ru": f"Новая игра: {', '.join(names)} ({preset_title(preset)[1]})"})

    @announced
    def resume(self, game_id: int, actor: str | None = None, replace: bool = False) -> bool:
        """Put stored game ``game_id`` back on the table: True, or False when it is on the table already.
        NotFound when unknown; Conflict when it is finished, or when another unfinished game is on the table
        and ``replace`` is false (code ``replace_needed``)."""
        with self.lock:
            g = self.store.get_game(game_id)
            if g is None:
                raise NotFound(f"no game {game_id}", f"игры {game_id} нет")
            if g.status == "finished":
                raise Conflict(f"game {game_id} is over: start a rematch instead",
                                 f"игра {game_id} окончена: начните реванш", code="finished")
            if game_id == self.game_id:
                return False
            running = self.running_game()
            if running is not None and not replace:
                who = ", ".join(json_names(running["players"]))
                raise Conflict(f"Game {running['id']} ({who}) is still being played: confirm to put it aside and "
                               f"resume game {game_id}",
                               f"Игра {running['id']} ({who}) ещё идёт: подтвердите, чтобы отложить её и продолжить "
                               f"игру {game_id}", code="replace_needed")
            try:
                state_from_json(g.state_json)
            except BadInput:
                raise Conflict(f"game {game_id} cannot be restored", f"игру {game_id} нельзя восстановить") from None
            self.store.activate_game(game_id)
            g = self.store.get_game(game_id)
            assert g is not None
            self._load_game(g)
            self.events.append({"kind": "resumed", "player": "", "points": 0, "faces": [],
                                "text_en": f"Game {game_id} resumed: {', '.join(g.players)}",
                                "text_ru": f"Игра {game_id} продолжена: {', '.join(g.players)}"})
            return True

    def rematch(self, game_id: int, actor: str | None = None, replace: bool = False) -> None:
        """A new game with the players and rules of game ``game_id`` (same seat order); see :meth:`new_game`
        (which announces it)."""
        g = self.store.get_game(game_id)
        if g is None:
            raise NotFound(f"no game {game_id}", f"игры {game_id} нет")
        preset, overrides = (g.rules or {}).get("preset", "classic"), (g.rules or {}).get("overrides")
        self.new_game(list(g.players), preset if isinstance(preset, str) else "classic",
                      overrides if isinstance(overrides, dict) and overrides else None, actor=actor, replace=replace)

    def _apply(self, kind: str, action: GameAction, payload: JsonObject, actor: str | None,
               throw_id: int | None = None, supersedes: int | None = None, base: GameState | None = None) -> list[JsonObject]:
        """Apply an engine action, store it, update turns; returns the events. Caller holds the lock."""
        before = base if base is not None else self.state
        assert before is not None and self.game_id is not None
        try:
            after, events = before.apply(action)
        except RuleViolation as exc:
            raise Conflict(exc.reason_en, exc.reason_ru) from None
        except BadInput as exc:
            raise Invalid(str(exc), str(exc)) from None
        evs = [event_json(e) for e in events]
        mover = before.to_move
        turn_end: JsonObject | None = None
        next_turn: JsonObject | None = None
        turn_events = [e for e in events if e.kind == "turn"]
        outcome = turn_outcome(events, after.over)  # the engine's Event.outcome; None: no turn ended by it
        if outcome is not None or turn_events:
            score_after = score_of(after, mover) if mover else None
            # an order / set-up throw (Pig, Aces, Buck dice) ends no player's turn: the sheet and statistics skip it
            turn_end = {"score_after": score_after,
                        "outcome": outcome or ("setup" if getattr(before, "in_setup", False) else "end")}
            nxt = turn_events[-1].player if turn_events else after.to_move  # no "turn" event in a final round
            if nxt is not None and not after.over:
                next_turn = {"turn_no": self.turn_no + 1, "player": nxt, "score_before": score_of(after, nxt)}
        status = "finished" if after.over else "active"
        winner = after.winner
        self.store.record_action(
            self.game_id, kind, payload, player=mover, turn_no=self.turn_no, actor=actor,
            state_before_json=state_to_json(before), state_after_json=state_to_json(after), events=evs,
            throw_id=throw_id, throw_resolution="applied" if throw_id is not None else None,
            turn_end=turn_end, next_turn=next_turn, status=status,
            winner=winner if isinstance(winner, str) or winner is None else ", ".join(winner),
            supersedes=supersedes,
        )
        self.state = after
        turn_no = self.turn_no
        if next_turn is not None:
            self.turn_no += 1
        self.events.extend(evs)
        self.last_error = None
        self._state_changed()
        if self.action_listeners:
            applied = AppliedAction(
                self.game_id, kind, mover, turn_no, evs, turn_end,
                str(next_turn["player"]) if next_turn is not None else None, after.over,
                winner if isinstance(winner, str) or winner is None else ", ".join(winner), supersedes is not None,
                json_faces(payload["faces"]) if kind == "roll" and "faces" in payload else [], after)
            for listener in self.action_listeners:
                try:
                    listener(applied)
                except Exception:  # noqa: BLE001 - a listener's fault must not undo a recorded action
                    log.exception("action listener %r failed", listener)
        return evs

    @announced
    def submit_throw(self, thr: TableThrow, actor: str = "camera") -> JsonObject:
        """Take a settled throw: apply it when it is ``ok`` and matches the state, else hold it pending.

        Returns ``{"applied": bool, "throw_id": int | None, "reasons": [...]}``. Without a running game the
        throw is only shown (not stored).
        """
        jpeg, thumb = thr.photos()  # a camera throw's photo was encoded before it reached the table
        with self.lock:
            st = self.state
            if st is None or st.over or self.game_id is None:
                self.last_throw = unstored_view(thr, "ignored")
                return {"applied": False, "throw_id": None, "reasons": ["no game in progress"]}
            if thr.corrects is not None:
                # The same physical throw, corrected by the camera (a die tipped over): the roll it replaces,
                # when it is still the latest action, is taken back first — one throw, one score.
                last = self.store.last_live_action(self.game_id)
                row = self.store.get_throw(last.throw_id) if last is not None and last.throw_id is not None else None
                if last is not None and last.kind == "roll" and row is not None and row.frame_index == thr.corrects:
                    self.store.undo_last(self.game_id)
                    self.state = state_from_json(last.state_before_json)
                    self.turn_no = last.turn_no
                    st = self.state
                    self._state_changed()
            reasons = list(thr.reasons)  # the pipeline's reasons (and warnings) "English / Русский"
            blocking = []
            why = why_no_throw(st)  # the game waits for a choice first (a bet, a claim, the 2–7 die): say which
            mismatch = count_mismatch(st, len(thr.dice))
            if why is not None:
                blocking.append(f"no throw is due now: {why.text_en} / сейчас не бросают: {why.text_ru}")
            elif mismatch is not None:
                blocking.append(mismatch.reason())
            if any(d.value not in range(1, 7) for d in thr.dice):
                blocking.append("a die could not be read / кость не распознана")
            ok = thr.status == "ok" and not blocking
            reasons += [r for r in blocking if thr.status != "uncertain" or not reasons]
            # A new throw replaces one still waiting: the dice on the table are what counts.
            self.store.resolve_pending(self.game_id, "superseded")
            self._pending_edits.clear()
            tid = self.store.add_throw(
                game_id=self.game_id, turn_no=self.turn_no, player=st.to_move, faces=thr.faces,
                confidences=[float(d.confidence) for d in thr.dice], boxes=[list(map(float, d.box)) for d in thr.dice],
                status="ok" if ok else "uncertain", reasons=reasons, frame_index=thr.frame_index, time_s=thr.time_s,
                resolution="pending", source=actor, jpeg=jpeg, thumb=thumb,
            )
            applied = False
            if ok:
                try:
                    self._apply("roll", Roll(tuple(thr.faces)), {"faces": list(thr.faces)}, actor, throw_id=tid)
                    applied = True
                except TableError as exc:
                    reasons.append(f"{exc.en} / {exc.ru}")
                    self.last_error = dict(exc.to_json())
            row = self.store.get_throw(tid)
            self.last_throw = throw_view(self.store, row) if row else None
            if self.last_throw is not None:
                self.last_throw["settled_at"] = thr.settled_at
                self.last_throw["reasons"] = list(reasons)
            return {"applied": applied, "throw_id": tid, "reasons": list(reasons)}

    @announced
    def bank(self, game_id: int | None = None, actor: str | None = None) -> None:
        """Stop ("хватит") and record the turn points. 409 with the engine's reason when forbidden."""
        with self.lock:
            self.require(game_id)
            self._no_pending()
            self._apply("bank", Bank(), {}, actor)

    @announced
    def keep(self, faces: list[int], game_id: int | None = None, actor: str | None = None) -> None:
        """Set these scoring dice aside from the last throw (presets where the player chooses)."""
        with self.lock:
            self.require(game_id)
            self._no_pending()
            try:
                action = Keep(tuple(faces))
            except BadInput as exc:
                raise Invalid(str(exc)) from None
            self._apply("keep", action, {"faces": list(faces)}, actor)

    @announced
    def choose(self, key: str, value: JsonValue, game_id: int | None = None, actor: str | None = None) -> None:
        """A game's own choice ``{key: value}`` (e.g. a claim, a bet, an operation): 409 with the engine's reason
        when the rules forbid it now, 422 when malformed."""
        with self.lock:
            self.require(game_id)
            self._no_pending()
            self._apply("choose", Choose(key, value), {"key": key, "value": value}, actor)

    def _no_pending(self) -> None:
        assert self.game_id is not None
        if self.store.pending_throw(self.game_id) is not None:
            raise Conflict("a throw is waiting for confirmation: confirm or fix it first",
                             "бросок ждёт подтверждения: подтвердите или исправьте его")

    def _pending_or_409(self) -> ThrowRow:
        assert self.game_id is not None
        p = self.store.pending_throw(self.game_id)
        if p is None:
            raise Conflict("no throw is waiting for confirmation", "нет броска, ждущего подтверждения")
        return p

    def _remember_pending(self, p: ThrowRow) -> None:
        """Keep the pending throw's dice before an edit, so that Undo can take the edit back."""
        self._pending_edits = [e for e in self._pending_edits if e[0] == p.id]
        self._pending_edits.append((p.id, list(p.faces), [list(b) for b in p.boxes], list(p.confidences)))

    def _pending_changed(self, throw_id: int) -> None:
        row = self.store.get_throw(throw_id)
        self.last_throw = throw_view(self.store, row) if row else self.last_throw

    @announced
    def fix(self, die_index: int, value: int, game_id: int | None = None, actor: str | None = None) -> None:
        """Correct one die (index into the throw's dice, value 1–6).

        On a pending throw the value is changed (``die_index`` = the number of dice adds a die the camera
        missed) and the throw stays pending until confirmed. On the latest applied throw (when it is still
        the latest action) the roll is re-applied with the corrected faces; Undo then restores the throw as
        it was before the fix (:meth:`undo`).
        """
        if not 1 <= int(value) <= 6:
            raise Invalid(f"a die shows 1–6, not {value}", f"на кости 1–6, а не {value}")
        with self.lock:
            self.require(game_id)
            assert self.game_id is not None
            p = self.store.pending_throw(self.game_id)
            if p is not None:
                faces, boxes, confs = list(p.faces), [list(b) for b in p.boxes], list(p.confidences)
                if die_index == len(faces):  # a die the camera missed
                    if len(faces) >= 12:
                        raise Invalid("a throw has at most 12 dice", "в броске не больше 12 костей")
                    faces.append(int(value))  # no box: the camera never saw it (no training label is made)
                    confs.append(1.0)
                    old = None
                elif 0 <= die_index < len(faces):
                    old = faces[die_index]
                    faces[die_index] = int(value)
                else:
                    raise Invalid(f"there is no die {die_index + 1} in this throw",
                                     f"в этом броске нет кости {die_index + 1}")
                self._remember_pending(p)
                self.store.add_correction(p.id, self.game_id, die_index, old, int(value), actor)
                self.store.set_throw_dice(p.id, faces, boxes[:len(faces)], confs[:len(faces)])
                return self._pending_changed(p.id)
            last = self._fixable_action()
            if last is None:
                raise Conflict("only the latest throw can be fixed; undo back to it first",
                                 "исправить можно только последний бросок; сначала отмените действия после него")
            assert last.throw_id is not None  # _fixable_action: a throw's roll
            row = self.store.get_throw(last.throw_id)
            assert row is not None
            faces = json_faces(last.payload["faces"])
            if not 0 <= die_index < len(faces):
                raise Invalid(f"there is no die {die_index + 1} in this throw",
                                 f"в этом броске нет кости {die_index + 1}")
            old = faces[die_index]
            faces[die_index] = int(value)
            self._reapply_roll(last, faces, {"faces": list(faces), "corrected": True, "original_faces": list(json_faces(last.payload["faces"]))},
                               actor)
            self.store.add_correction(row.id, self.game_id, die_index, old, int(value), actor)
            self.store.set_throw_resolution(row.id, "corrected")
            self._save_correction(row.id)
            return self._pending_changed(row.id)

    def _fixable_action(self) -> ActionRow | None:
        """The game's latest live action when it is a throw's roll (the one applied throw :meth:`fix` may still
        change), else ``None``: after a Stop, a keep or any other later action only Undo reaches the throw."""
        if self.game_id is None:
            return None
        last = self.store.last_live_action(self.game_id)
        return last if last is not None and last.kind == "roll" and last.throw_id is not None else None

    def fixable_throw_id(self) -> int | None:
        """Id of the applied throw that Fix can still correct (:meth:`_fixable_action`), else ``None``; the page
        offers Fix of the last throw only for this throw (a pending throw is fixed in place, always)."""
        with self.lock:
            act = self._fixable_action()
            return act.throw_id if act is not None else None

    def _reapply_roll(self, last: ActionRow, faces: list[int], payload: JsonObject, actor: str | None) -> None:
        """Replace roll action ``last`` by ``Roll(faces)`` applied to the state before it (turn bookkeeping
        rebuilt by :meth:`Store.record_action`); the throw's faces follow. Caller holds the lock."""
        base, throw_id = state_from_json(last.state_before_json), last.throw_id
        assert throw_id is not None, last  # a roll from the camera (the caller checked)
        saved_turn = self.turn_no
        self.turn_no = last.turn_no
        try:
            self._apply("roll", Roll(tuple(faces)), payload, actor, throw_id=throw_id, supersedes=last.id, base=base)
        except TableError:
            self.turn_no = saved_turn
            raise
        self.store.update_throw_faces(throw_id, faces)

    @announced
    def remove_die(self, die_index: int, game_id: int | None = None, actor: str | None = None) -> None:
        """Take die ``die_index`` (0-based) out of the pending throw: the camera saw a die that was not
        thrown (a set-aside die, a die off the tray). 409 without a pending throw, 422 for a bad index."""
        with self.lock:
            self.require(game_id)
            p = self._pending_or_409()
            assert self.game_id is not None
            if not 0 <= die_index < len(p.faces):
                raise Invalid(f"there is no die {die_index + 1} in this throw",
                                 f"в этом броске нет кости {die_index + 1}")
            faces, boxes, confs = list(p.faces), [list(b) for b in p.boxes], list(p.confidences)
            old = faces.pop(die_index)
            if die_index < len(boxes):
                boxes.pop(die_index)
            if die_index < len(confs):
                confs.pop(die_index)
            self._remember_pending(p)
            # new_value 0 = the die was removed (corrections.new_value is NOT NULL).
            self.store.add_correction(p.id, self.game_id, die_index, old, 0, actor)
            self.store.set_throw_dice(p.id, faces, boxes, confs)
            return self._pending_changed(p.id)

    @announced
    def enter(self, faces: list[int], game_id: int | None = None, actor: str | None = "manual") -> None:
        """Score a throw typed in by hand (any source: the camera is down, missed the throw, or misread it).

        ``faces``: the faces 1–6 of the dice thrown, as many as the state asks for (one of
        :func:`roll_sizes`). A throw waiting for confirmation is replaced (``superseded``). Stored as a
        throw with ``source = "manual"`` and applied as ``Roll(faces)``. 422 (in both languages) for a face
        outside 1–6 or a wrong number of dice; 409 when the rules forbid a throw now.
        """
        with self.lock:
            st = self.require(game_id)
            assert self.game_id is not None
            try:
                faces = [int(f) for f in faces]
            except (TypeError, ValueError):
                raise Invalid("faces are numbers 1–6", "грани — числа от 1 до 6") from None
            if any(f not in range(1, 7) for f in faces):
                raise Invalid("each die shows 1–6", "на каждой кости от 1 до 6")
            self._check_count(st, len(faces))
            self.store.resolve_pending(self.game_id, "superseded")
            self._pending_edits.clear()
            tid = self.store.add_throw(game_id=self.game_id, turn_no=self.turn_no, player=st.to_move, faces=faces,
                                       confidences=[1.0] * len(faces), boxes=[], status="ok", reasons=[],
                                       resolution="pending", source="manual")
            try:
                self._apply("roll", Roll(tuple(faces)), {"faces": list(faces), "manual": True}, actor, throw_id=tid)
            except TableError:
                self.store.set_throw_resolution(tid, "rejected")
                raise
            return self._pending_changed(tid)

    @staticmethod

    def _check_count(st: GameState, n: int) -> None:
        """Refuse (Invalid, code ``dice_count``) a typed or confirmed throw of ``n`` dice the state does not allow."""
        mismatch = count_mismatch(st, n)
        if mismatch is not None:
            raise mismatch.error()

    @announced
    def confirm(self, faces: list[int] | None = None, game_id: int | None = None, actor: str | None = None) -> None:
        """Accept the pending throw (optionally with all its faces given, any number of them: a die the
        camera saw but nobody threw is left out) and apply it as ``Roll``."""
        with self.lock:
            st = self.require(game_id)
            assert self.game_id is not None
            p = self._pending_or_409()
            cur = list(p.faces)
            if faces is not None:
                new = [int(f) for f in faces]
                if any(f not in range(1, 7) for f in new):
                    raise Invalid("each die shows 1–6: set every die or remove it",
                                     "на каждой кости от 1 до 6: укажите каждую кость или уберите её")
                self._check_count(st, len(new))
                self._remember_pending(p)
                for i, v in enumerate(new):
                    old = cur[i] if i < len(cur) else None
                    if old != v:
                        self.store.add_correction(p.id, self.game_id, i, old, v, actor)
                boxes = [list(b) for b in p.boxes][:len(new)]  # dice typed beyond the camera's have no box
                confs = list(p.confidences)[:len(new)] + [1.0] * max(0, len(new) - len(p.confidences))
                cur = new
                self.store.set_throw_dice(p.id, cur, boxes, confs)
            bad = [i for i, f in enumerate(cur) if f not in range(1, 7)]
            if bad:
                raise Conflict(f"die {bad[0] + 1} is unread: set its value or remove it",
                                 f"кость {bad[0] + 1} не распознана: укажите её значение или уберите её")
            self._check_count(st, len(cur))
            self._apply("roll", Roll(tuple(cur)), {"faces": list(cur), "confirmed": True}, actor, throw_id=p.id)
            self._pending_edits.clear()
            if any(c["throw_id"] == p.id for c in self.store.corrections(self.game_id)):
                self.store.set_throw_resolution(p.id, "corrected")
            self._save_correction(p.id)
            return self._pending_changed(p.id)

    def _save_correction(self, throw_id: int) -> None:
        """Save a throw the table confirmed or corrected into :attr:`corrections_dir` for retraining
        (the settled frame and the faces the players gave, boxes from the camera). Never fails the game."""
        if self.corrections_dir is None or not self.frames_are_real():
            return
        row = self.store.get_throw(throw_id)
        jpeg = self.store.throw_image(throw_id)
        if row is None or jpeg is None:
            return
        dice = [{"value": f, "box": row.boxes[i] if i < len(row.boxes) else None,
                 "confidence": row.confidences[i] if i < len(row.confidences) else None}
                for i, f in enumerate(row.faces)]
        try:
            from kosti.datasets.capture import save_correction

            save_correction(self.corrections_dir, jpeg, dice, model=self.model_name() or None,
                            key=f"game{row.game_id}-throw{row.id}")
        except Exception as exc:  # noqa: BLE001 - training data is a bonus; the game goes on
            log.warning("could not save the corrected throw %s for retraining: %s", throw_id, exc)

    @announced
    def discard(self, game_id: int | None = None, actor: str | None = None) -> None:
        """Drop the pending throw (the dice will be thrown again)."""
        with self.lock:
            self.require(game_id)
            assert self.game_id is not None
            if self.store.resolve_pending(self.game_id, "discarded") == 0:
                raise Conflict("no throw is waiting for confirmation", "нет броска, ждущего подтверждения")
            self._pending_edits.clear()

    @announced
    def undo(self, game_id: int | None = None, actor: str | None = None) -> None:
        """Undo the latest step, one at a time:

        * an edit of the pending throw (fix / add / remove a die) → the throw's dice before that edit;
        * a pending throw without edits → dropped (``discarded``);
        * a fix of an applied throw → the throw as it was before the fix (re-applied; the dice are still on
          the table, so the fix is what was wrong, not the throw);
        * any other action → the stored state before it.
        """
        with self.lock:
            if game_id is not None and game_id != self.game_id:
                self.require(game_id)
            if self.game_id is None:
                raise Conflict("no game in progress", "игра не начата")
            p = self.store.pending_throw(self.game_id)
            if p is not None:
                edits = [e for e in self._pending_edits if e[0] == p.id]
                if edits:
                    _, faces, boxes, confs = edits[-1]
                    self._pending_edits.remove(edits[-1])
                    self.store.set_throw_dice(p.id, faces, boxes, confs)
                    self._event("undo", p.player or "", f"Edit undone: the throw reads {faces_text(faces)} again",
                                f"Исправление отменено: в броске снова {faces_text(faces)}")
                    return self._pending_changed(p.id)
                self.store.resolve_pending(self.game_id, "discarded")
                self._event("undo", p.player or "", f"Throw {faces_text(p.faces)} dropped",
                            f"Бросок {faces_text(p.faces)} сброшен")
                return
            last = self.store.last_live_action(self.game_id)
            if last is not None and last.kind == "roll" and last.payload.get("original_faces") and last.throw_id is not None:
                orig = json_faces(last.payload["original_faces"])
                self._reapply_roll(last, orig, {"faces": list(orig), "restored": True}, actor)
                self.store.set_throw_resolution(last.throw_id, "applied")
                self._event("undo", last.player or "", f"Fix undone: the throw is {faces_text(orig)} again",
                            f"Исправление отменено: бросок снова {faces_text(orig)}")
                self.last_error = None
                return self._pending_changed(last.throw_id)
            act = self.store.undo_last(self.game_id)
            if act is None:
                raise Conflict("nothing to undo", "отменять нечего")
            self.state = state_from_json(act.state_before_json)
            self.turn_no = act.turn_no
            en, ru = action_text(act.kind, act.payload)
            self._event("undo", act.player or "", f"Undone: {en}", f"Отменено: {ru}")
            if act.throw_id is not None and self.last_throw and self.last_throw.get("id") == act.throw_id:
                row = self.store.get_throw(act.throw_id)
                self.last_throw = throw_view(self.store, row) if row else None
            self.last_error = None
            self._state_changed()

    def _event(self, kind: str, player: str, en: str, ru: str) -> None:
        self.events.append({"kind": kind, "player": player, "points": 0, "faces": [], "text_en": en, "text_ru": ru})
