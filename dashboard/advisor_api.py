"""The turn advisor of the table (application layer; its routes and the statistics' are
:mod:`kosti.dashboard.routes.advice`, the models :mod:`kosti.dashboard.schemas.advice`).

* ``GET /api/advice`` — advice for the player to move in the live game
  (:func:`kosti.engine.advisor.advise`): ``{"available": true, "version": n, "game_id": id,
  "advice": {...kosti advise JSON...}, "objective": "...", "objective_kind": "turn"}``, or
  ``{"available": false, "version", "game_id", "reason", "reason_ru"}`` when there is no game, it is over,
  or the advisor has no model of it (:class:`AdviceAnswer`). A two-player Pig table gets the second
  objective, the win probability (:func:`kosti.engine.advisor.pig.advise_pig`): ``"objective_kind": "win"``
  and the advice carries ``win_if_throw`` / ``win_if_stop``; the Pig table of the game's target is solved
  in the warm-up thread when the game is put on the table (seconds, once per target). ``version`` is the
  table snapshot's, so the page can tell which state the advice belongs to. The page
  (``static/advisor.js``) fetches it after every state push on ``/ws``; it can be hidden by the players,
  and is off in the spectator view (``/tv``, ``/?view=tv``).
* ``GET /api/stats`` (``?game=ID`` repeatable) — :func:`kosti.dashboard.stats.collect`
  (:class:`kosti.dashboard.stats.StatsDocument`); an unknown game is a 404 (:class:`NotFound`).
* ``GET /api/stats/faces.png`` — the face-frequency plot with its expected band.

Advice is computed outside the table lock, one request at a time (the advisor's memo is shared).
The per-rules throw tables are built in a background thread as soon as a game is put on the table
(new, resumed, rematch, or restored at start-up: :func:`kosti.engine.advisor.prepare_tables`), so the
first advice does not build them. Once a page has asked for advice, :class:`TurnPresolver` solves each
new turn in a background thread as the state changes (the cold solve, tens of ms here, see
``benchmarks/bench_advisor.py``), so the page's request after a state push is a lookup.
"""

from __future__ import annotations

import logging
import threading
import time

from kosti.dashboard.schemas.advice import AdviceAnswer, AdviceFigures
from kosti.engine.advisor import advise, prepare_tables
from kosti.engine.advisor.advice import OBJECTIVE
from kosti.engine.advisor.pig import MAX_TARGET, OBJECTIVE_WIN, advise_pig, pig_refusal, solve
from kosti.engine.game import GameState
from kosti.engine.games import Game
from kosti.engine.games.pig import Pig, PigParams

from .table import TableService

log = logging.getLogger(__name__)
_ADVICE_LOCK = threading.Lock()


def advised_game(game: Game | GameState) -> GameState | Pig | None:
    """The state the advisor reasons about: the 1000 engine's :class:`GameState`, a :class:`Pig`, or None for
    a game it has no model of."""
    if isinstance(game, GameState | Pig):
        return game
    return None


class TurnPresolver:
    """Solves the turn of each new state in the background, so that the page's ``/api/advice`` after a
    state push finds the turn's policy solved (a lookup, well under a millisecond) instead of solving
    it itself (the cold solve, tens of ms here: ``benchmarks/bench_advisor.py``).

    :meth:`offer` is a :attr:`GameSession.state_listeners` entry (called under the table lock, returns at
    once); one daemon thread solves the latest offered state only (older ones are dropped). It does
    nothing until ``wanted`` is set — by the first advice a page asks for — so a table that hides the
    advisor pays no CPU for it. ``solved`` counts the states it solved (tests)."""

    def __init__(self) -> None:
        self.wanted = False
        self.solved = 0
        self._latest: GameState | None = None
        self._busy = False
        self._cv = threading.Condition()
        self._thread: threading.Thread | None = None

    def offer(self, game: Game | GameState | None) -> None:
        """Queue ``game`` (the new state on the table) for a background solve, replacing any state not
        yet taken; ignored when no page wants advice, or for a game the 1000-family advisor does not
        model (Pig's win table is solved once per game by the warm-up thread)."""
        if not self.wanted or game is None or game.over:
            return
        st = advised_game(game)
        if not isinstance(st, GameState):
            return
        with self._cv:
            self._latest = st
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="kosti-advisor-turns", daemon=True)
                self._thread.start()
            self._cv.notify()

    def wait_idle(self, timeout: float) -> bool:
        """Block until no offered state waits or is being solved (tests); True when idle within
        ``timeout`` seconds."""
        end = time.monotonic() + timeout
        with self._cv:
            while self._latest is not None or self._busy:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._cv.wait(left)
            return True

    def _run(self) -> None:
        while True:
            with self._cv:
                while self._latest is None:
                    self._cv.wait()
                st, self._latest, self._busy = self._latest, None, True
            try:
                with _ADVICE_LOCK:
                    advise(st)
                self.solved += 1
            except Exception:  # noqa: BLE001 - a failed pre-solve only means the page solves it
                log.exception("advisor pre-solve failed")
            finally:
                with self._cv:
                    self._busy = False
                    self._cv.notify_all()


class TableAdvisor:
    """The advisor of one table (see the module's text). Registers a game hook on the table's session that builds the
    game's throw tables in the background (the latest thread is ``table.advisor_warmup``), starts one at once for a
    game already on the table, and offers every new state to a :class:`TurnPresolver` (``table.advisor_presolver``).
    The route (:mod:`kosti.dashboard.routes.advice`) asks :meth:`answer`."""

    def __init__(self, table: TableService) -> None:
        self.table = table
        table.session.game_hooks.append(self.warm)
        if table.session.state is not None:
            self.warm(table.session.state)
        self.presolver = TurnPresolver()
        table.advisor_presolver = self.presolver
        table.session.state_listeners.append(self.presolver.offer)

    def warm(self, game: Game | GameState) -> None:
        """Build the throw tables of ``game``'s rules (the 1000 family) or solve its Pig win table in a background
        thread (``table.advisor_warmup``); nothing for a game the advisor has no model of."""
        st = advised_game(game)  # the advisor knows the 1000 family and two-player Pig
        if isinstance(st, Pig):
            p = st.params
            if not isinstance(p, PigParams) or st.over or len(st.names) != 2 or not 2 <= p.target <= MAX_TARGET:
                return  # no win model for this table (the advice says why)

            def solve_pig() -> None:
                with _ADVICE_LOCK:
                    try:
                        sol = solve(p.target, p.equal_series)
                    except ValueError:
                        return
                    log.debug("Pig win table for target %d solved in %.1f s", p.target, sol.solve_time_s)

            th = threading.Thread(target=solve_pig, name="kosti-advisor-pig", daemon=True)
            self.table.advisor_warmup = th
            th.start()
            return
        if st is None:
            return
        rules = st.rules

        def build() -> None:
            with _ADVICE_LOCK:  # an advice asked meanwhile waits for the tables instead of building them twice
                t0 = time.perf_counter()
                prepare_tables(rules)
                log.debug("advisor throw tables for %s ready in %.0f ms", rules.name, 1000 * (time.perf_counter() - t0))

        th = threading.Thread(target=build, name="kosti-advisor-tables", daemon=True)
        self.table.advisor_warmup = th
        th.start()

    def answer(self) -> AdviceAnswer:
        """The advice for the player to move in the state on the table now, with the snapshot ``version`` it belongs
        to, or why there is none (no game, over, no model of the game: English and Russian)."""
        with self.table.session.lock:
            game, version, gid = self.table.session.state, self.table.version, self.table.session.game_id

        def refused(en: str, ru: str) -> AdviceAnswer:
            return AdviceAnswer(available=False, version=version, game_id=gid, reason=en, reason_ru=ru)

        if game is None:
            return refused("no game", "игры нет")
        if game.over:
            return refused("the game is over", "игра окончена")
        st = advised_game(game)  # the table hosts any game; the advisor knows the 1000 family and Pig
        if isinstance(st, Pig):
            why_not = pig_refusal(st)
            if why_not is not None:
                return refused(why_not.text_en, why_not.text_ru)
            with _ADVICE_LOCK:
                pa = advise_pig(st)
            return AdviceAnswer(available=True, version=version, game_id=gid,
                                advice=AdviceFigures.model_validate(pa.to_json()),
                                objective=OBJECTIVE_WIN, objective_kind="win")
        if st is None:
            return refused("advice covers 1000, Farkle, 10000 and two-player Pig",
                           "советы есть для 1000, фаркла, 10000 и «Свиньи» на двоих")
        self.presolver.wanted = True  # a page shows advice: solve each new turn as soon as it begins
        with _ADVICE_LOCK:
            a = advise(st)
        return AdviceAnswer(available=True, version=version, game_id=gid,
                            advice=AdviceFigures.model_validate(a.to_json()),
                            objective=OBJECTIVE, objective_kind="turn")


__all__ = ["TableAdvisor", "TurnPresolver", "advised_game"]
