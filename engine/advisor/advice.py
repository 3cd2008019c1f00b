"""The advice of the 1000 family: the exact risk of the next throw and "throw or stop" under the house rules.

Three modules of :mod:`kosti.engine.advisor`, all pure (no I/O), built on the engine itself (the policy's
probes run the engine's turn steps, :mod:`kosti.engine.turn`, exactly as :meth:`GameState.apply` runs them):

1. **Throw risk** — :mod:`kosti.engine.advisor.throw_tables`: :func:`throw_classes`,
   :func:`bust_probability`, :func:`points_distribution`, :func:`expected_points` by exact
   enumeration of all 6^N throws under the preset's scoring.
2. **Stop or throw** — :mod:`kosti.engine.advisor.stop_or_throw`: :class:`TurnPolicy`, a turn-level
   optimal policy by dynamic programming whose objective is the expected **recorded points of the
   turn** (its limits, stated honestly, are in that module's docstring: a turn-level policy, not
   the probability of winning the game).
3. **The advice** — this module: :func:`advise` turns the policy's values into an :class:`Advice`
   with the reason in English and Russian (cli.md ``kosti advise``).

Every public name of the three is re-exported by the package, so ``from kosti.engine.advisor import advise``
is the usual import.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..game import GameState
from ..plurals import count_ru, ru_plural
from ..texts import dice_en
from .stop_or_throw import CONFIRM, HOT, NORMAL, TurnPolicy, policy_for
from .throw_tables import (
    ThrowClass,
    _classes,
    _dp_table,
    bust_probability,
    expected_points,
    points_distribution,
    prepare_tables,
    throw_classes,
    throw_kind,
)

__all__ = [
    "CLI_KEYS",
    "CONFIRM",
    "HOT",
    "NORMAL",
    "OBJECTIVE",
    "Advice",
    "ThrowClass",
    "TurnPolicy",
    "_classes",
    "_dp_table",
    "advise",
    "bust_probability",
    "expected_points",
    "points_distribution",
    "policy_for",
    "prepare_tables",
    "throw_classes",
    "throw_kind",
]


@dataclass(frozen=True, slots=True)
class Advice:
    """Advice for the player to move (cli.md ``kosti advise``).

    ``player``; ``dice_to_throw`` (dice of the next throw); ``turn_points`` (points, before the
    pending keep in the keep phase); ``bust_probability`` (exact, one throw of those dice, float in
    [0, 1]); ``expected_points`` (expected points that throw adds with its best keep);
    ``may_stop`` (the engine allows a stop now); ``advice`` ``"throw"`` | ``"stop"``;
    ``stop_value`` / ``throw_value`` (expected recorded points of the turn — the objective of the
    module docstring — if the player stops now (None when he may not) / throws and then plays on
    optimally); ``requirement`` (``"open"``, ``"pit"``, ``"barrel"`` or None) and
    ``record_probability`` (probability that this turn records its points — opens, leaves the pit,
    wins from the barrel — under the advised play); ``keep`` (in the keep phase: the dice to set
    aside, sorted); ``at_risk`` (turn points a zero throw would lose); ``why`` / ``why_ru``.
    """

    player: str
    dice_to_throw: int
    turn_points: int
    bust_probability: float
    expected_points: float
    may_stop: bool
    advice: str
    stop_value: float | None
    throw_value: float
    requirement: str | None
    record_probability: float
    keep: tuple[int, ...] | None
    at_risk: int
    why: str
    why_ru: str

    def to_cli_json(self) -> dict[str, Any]:
        """Exactly the cli.md ``kosti advise --json`` document: its eleven keys, in its order."""
        d = self.to_json()
        return {k: d[k] for k in CLI_KEYS}

    def to_json(self) -> dict[str, Any]:
        """Every field: the cli.md ``kosti advise`` keys plus ``requirement``,
        ``record_probability``, ``keep`` and ``at_risk`` (the dashboard's ``/api/advice``)."""
        def r(v: float | None) -> float | None:
            return None if v is None else round(v, 2)

        return {
            "player": self.player, "dice_to_throw": self.dice_to_throw,
            "turn_points": self.turn_points, "bust_probability": float(self.bust_probability),
            "expected_points": r(self.expected_points), "may_stop": self.may_stop,
            "advice": self.advice, "stop_value": r(self.stop_value),
            "throw_value": r(self.throw_value), "requirement": self.requirement,
            "record_probability": round(self.record_probability, 4),
            "keep": None if self.keep is None else list(self.keep), "at_risk": self.at_risk,
            "why": self.why, "why_ru": self.why_ru,
        }


#: What the 1000 family's advice maximises (printed by ``kosti advise`` and sent with the dashboard's advice).
OBJECTIVE = "turn: expected recorded points of this turn (net of the opponents' mean change)"

#: The keys of ``kosti advise --json``, in the order of ../shared/docs/cli.md.
CLI_KEYS = ("player", "dice_to_throw", "turn_points", "bust_probability", "expected_points",
            "may_stop", "advice", "stop_value", "throw_value", "why", "why_ru")


def _pct(p: float, ru: bool = False) -> str:
    """A probability as a percentage for people: one decimal below 10 %, else whole; Russian uses
    the decimal comma."""
    x = 100 * p
    if 0 < x < 0.1:
        text = "< 0.1 %"
    elif x > 99.9 and x < 100:
        text = "> 99.9 %"
    else:
        text = f"{x:.1f} %" if x < 10 else f"{x:.0f} %"
    return text.replace(".", ",") if ru else text


def _requirement(state: GameState) -> str | None:
    r = state.rules
    i = state.turn.player
    p = state.players[i]
    if not p.opened and r.opening.threshold > 0:
        return "open"
    if state.in_pit(i):
        return "pit"
    if state.on_barrel(i):
        return "barrel"
    return None


_REQ_EN = {"open": "to open the game", "pit": "to leave the pit", "barrel": "to win from the barrel"}
_REQ_RU = {"open": "открыть игру", "pit": "выбраться из ямы", "barrel": "выиграть с бочки"}


def advise(state: GameState) -> Advice:
    """Advice for the player to move in ``state`` (see :class:`Advice`; objective and limits in
    :mod:`kosti.engine.advisor.stop_or_throw`). Raises ``ValueError`` when the game is over."""
    pol = policy_for(state)
    r = state.rules
    t = state.turn
    stop, go, keep = pol.value(state)
    if t.pending is not None:
        assert keep is not None
        left = t.dice - len(keep)
        n = left or r.dice_count
        at_risk = t.points + sum(o.points for o in state.moves().keeps if o.faces == keep)
    else:
        n = t.dice
        at_risk = t.points
    bust = float(bust_probability(r, n))
    gain = float(expected_points(r, n))
    may_stop = stop is not None
    sv = 0.0 if stop is None else stop[0]  # the stop's value, read below only where a stop is allowed
    throw = stop is None or go[0] > sv
    chosen = go if throw else stop
    assert chosen is not None
    req = _requirement(state)
    pb, pb_ru = _pct(bust), _pct(bust, ru=True)
    pr, pr_ru = _pct(chosen[1]), _pct(chosen[1], ru=True)
    need_en = f"; {pr} {_REQ_EN[req]} this turn" if req else ""
    need_ru = f"; {pr_ru} — шанс {_REQ_RU[req]} за этот ход" if req else ""
    dice_ru = count_ru(n, "die")
    ochkov = ru_plural(round(gain), "очко", "очка", "очков")  # "в среднем 2 очка"
    if not may_stop and t.pending is None and not t.scored and t.points == 0:
        en = (f"throw {dice_en(n)}: {pb} to score nothing, {gain:.0f} points expected from the "
              f"throw{need_en}")
        ru = (f"бросайте {dice_ru}: {pb_ru} — риск пустого броска, в среднем {gain:.0f} {ochkov} "
              f"за бросок{need_ru}")
    elif not may_stop:
        why_not = state.stop_reason() if t.pending is None else None
        reason_en = why_not.text_en if why_not else "a stop is not allowed now"
        reason_ru = why_not.text_ru if why_not else "остановиться сейчас нельзя"
        en = f"throw — you may not stop yet: {reason_en}; {pb} to lose the {at_risk}{need_en}"
        ru = (f"бросайте — остановиться пока нельзя: {reason_ru}; {pb_ru} — риск потерять "
              f"{at_risk}{need_ru}")
    elif throw and at_risk == 0:
        en = (f"nothing to lose yet — throw {dice_en(n)} ({pb} to score nothing, {gain:.0f} points "
              f"expected from the throw)")
        ru = (f"терять пока нечего — бросайте {dice_ru} ({pb_ru} — риск пустого броска, в "
              f"среднем {gain:.0f} {ochkov} за бросок)")
    elif throw:
        en = (f"{pb} to lose the {at_risk} — throw (worth {go[0]:.0f} on average against "
              f"{sv:.0f} for stopping)")
        ru = (f"{pb_ru} — риск потерять {at_risk}: бросайте (в среднем {go[0]:.0f} против "
              f"{sv:.0f}, если остановиться)")
    elif round(go[0]) == round(sv):
        en = (f"{pb} to lose the {at_risk} — stop and record: throwing gains nothing on average "
              f"({sv:.0f} either way)")
        ru = (f"{pb_ru} — риск потерять {at_risk}: хватит, запишите — бросок в среднем ничего не "
              f"добавляет ({sv:.0f} в обоих случаях)")
    else:
        en = (f"{pb} to lose the {at_risk} — stop and record (throwing is worth {go[0]:.0f} on "
              f"average against {sv:.0f})")
        ru = (f"{pb_ru} — риск потерять {at_risk}: хватит, запишите (бросок даёт в среднем "
              f"{go[0]:.0f} против {sv:.0f})")
    if keep is not None:
        en = f"set aside {' '.join(map(str, keep))}; " + en
        ru = f"отложите {' '.join(map(str, keep))}; " + ru
    return Advice(
        player=state.players[t.player].name, dice_to_throw=n, turn_points=t.points,
        bust_probability=bust, expected_points=gain, may_stop=may_stop,
        advice="throw" if throw else "stop", stop_value=None if stop is None else stop[0],
        throw_value=go[0], requirement=req, record_probability=chosen[1], keep=keep,
        at_risk=at_risk, why=en, why_ru=ru)
