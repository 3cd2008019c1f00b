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
Callers hold :attr:`GameSession.lock` around a call and its snapshot; every method takes it too. Every change of
what the table shows is announced to :attr:`GameSession.change_listeners` (:func:`announced`): the dashboard's table
publishes its snapshot, whoever made the change (a route, the WebSocket, ``kosti watch --rules``, a test).

One job per module: :mod:`.core` (the game, the store, the lock and listeners, applying an engine action),
:mod:`.corrections` (the pending throw and the corrections: fix, remove a die, confirm, discard, undo), and here
the games, the throws and the turn's controls.
"""

from __future__ import annotations

from kosti.dashboard.errors import Conflict, Invalid, NotFound, TableError
from kosti.dashboard.json_values import JsonObject, JsonValue, json_int, json_names
from kosti.dashboard.session.core import (
    AppliedAction,
    CountMismatch,
    SessionCore,
    announced,
    count_mismatch,
    why_no_throw,
)
from kosti.dashboard.session.corrections import ThrowCorrections
from kosti.dashboard.throws import TableThrow, unstored_view
from kosti.dashboard.views import (
    GameState,
    make_game,
    rules_reason_ru,
    score_of,
    state_from_json,
    state_to_json,
    throw_view,
)
from kosti.engine.errors import BadInput
from kosti.engine.game import Bank, Keep, Roll
from kosti.engine.games import Choose
from kosti.engine.names import PlayerNameError, check_player_names
from kosti.engine.titles import preset_title

__all__ = ["AppliedAction", "CountMismatch", "GameSession", "SessionCore", "ThrowCorrections", "announced", "count_mismatch",
           "why_no_throw"]


class GameSession(ThrowCorrections):
    """The game on the table and its controls (see the module's text): games, throws, turns here; the pending throw and
    the corrections in :class:`ThrowCorrections`; the state, the store and the listeners — its arguments and
    attributes — in :class:`SessionCore`.
    """

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
