"""The game session's core: the game on the table and its state, the store, the lock, the listeners, applying an
engine action (:meth:`SessionCore._apply`) and the checks every control makes; the change announcement
(:func:`announced`). The controls are :class:`kosti.dashboard.session.GameSession` (throws, turns, games) and
:class:`kosti.dashboard.session.corrections.ThrowCorrections` (the pending throw and corrections)."""

from __future__ import annotations

import functools
import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

from kosti.dashboard.errors import Conflict, Invalid, NotFound
from kosti.dashboard.json_values import JsonObject, json_faces, json_int
from kosti.dashboard.store import GameRow, Store
from kosti.dashboard.throws import TableThrow, unstored_view
from kosti.dashboard.views import (
    GameState,
    dice_ru,
    event_json,
    roll_sizes,
    score_of,
    state_from_json,
    state_to_json,
    throw_view,
    turn_outcome,
)
from kosti.engine.errors import BadInput, RuleViolation
from kosti.engine.games.base import GameAction
from kosti.engine.records import Reason

log = logging.getLogger(__name__)
_P = ParamSpec("_P")
_R = TypeVar("_R")
_S = TypeVar("_S", bound="SessionCore")

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


def announced(method: Callable[Concatenate[_S, _P], _R]) -> Callable[Concatenate[_S, _P], _R]:
    """A change of what the table shows: ``method`` runs under :attr:`GameSession.lock` and, unless it raised or
    returned ``False`` (nothing changed), every :attr:`GameSession.change_listeners` entry hears of it, still
    under the lock — so whoever calls the session (a route, the WebSocket, ``kosti watch``, a test) has the
    change shown on every screen, in order."""

    @functools.wraps(method)
    def changing(self: _S, *args: _P.args, **kwargs: _P.kwargs) -> _R:
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


class SessionCore:
    """The game on the table, its store and listeners (see :mod:`kosti.dashboard.session`).

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

    @staticmethod

    def _check_count(st: GameState, n: int) -> None:
        """Refuse (Invalid, code ``dice_count``) a typed or confirmed throw of ``n`` dice the state does not allow."""
        mismatch = count_mismatch(st, n)
        if mismatch is not None:
            raise mismatch.error()

    def _event(self, kind: str, player: str, en: str, ru: str) -> None:
        self.events.append({"kind": kind, "player": player, "points": 0, "faces": [], "text_en": en, "text_ru": ru})

    def _no_pending(self) -> None:
        assert self.game_id is not None
        if self.store.pending_throw(self.game_id) is not None:
            raise Conflict("a throw is waiting for confirmation: confirm or fix it first",
                             "бросок ждёт подтверждения: подтвердите или исправьте его")
