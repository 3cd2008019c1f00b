"""Every English / Russian sentence of the 1000 / Farkle engine, rendered from a code and parameters.

The rule modules (:mod:`kosti.engine.turn`, :mod:`kosti.engine.turn_end`, :mod:`kosti.engine.game`,
:mod:`kosti.engine.scoring`) decide *what* happened and call one function here per sentence; this
module alone decides the words. Each function is named by its code (the keys of :data:`TEXTS`),
takes the parameters of the sentence (names as ``str``, faces as a sequence of ints 1–6, points as
``int``) and returns ``(english, russian)``. :func:`render` looks a code up by name, for callers
that hold a code and parameters rather than the function.

The sentences are the score sheet's, the dashboard's and the replay log's; tests pin many of them
word for word, so a change here is a change of the product's text. Terms: rules.md §0.3 glossary
(bolt / болт, pit / яма, barrel / бочка, dump truck / самосвал, overtaking / обгон).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .plurals import count_en, count_ru, noun, ru_plural

__all__ = ["NUM_EN", "NUM_RU", "TEXTS", "dice_en", "faces_text", "render", "ru_plural"]

Text = tuple[str, str]

#: Numbers as words: English, Russian accusative ("бросайте две кости").
NUM_EN = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
NUM_RU = {1: "одну", 2: "две", 3: "три", 4: "четыре", 5: "пять", 6: "шесть"}


def faces_text(faces: Sequence[int]) -> str:
    """Faces as the sheet writes them: ``(1, 5, 5)`` → ``"1 5 5"``."""
    return " ".join(str(f) for f in faces)


def dice_en(n: int) -> str:
    """``"1 die"`` / ``"n dice"`` (:func:`kosti.engine.plurals.count_en`)."""
    return count_en(n, "die")


_fmt = faces_text

# ----------------------------------------------------------------------------------------------
# Reasons and hints (GameState.allowed / stop_reason, RuleViolation), rules.md §1.6


def game_over() -> Text:
    """Why nothing may be done: the game has ended."""
    return "the game is over", "игра окончена"


def keep_hint(best: Sequence[int], points: int) -> Text:
    """Keep-phase hint (§1.3): set aside at least one scoring die; ``best`` faces worth ``points``."""
    return (f"set aside at least one scoring die (best: {_fmt(best)} = {points}), then throw again or stop",
            (f"отложите хотя бы одну зачётную кость (лучше всего: {_fmt(best)} = {points}), затем бросайте "
             f"дальше или скажите «хватит»"))


def first_throw_hint(name: str, dice: int) -> Text:
    """Turn-start hint: player ``name`` throws ``dice`` dice (§1.2)."""
    return (f"{name}: throw {NUM_EN[dice]} {noun(dice, 'die')}",
            f"{name}: бросайте {NUM_RU[dice]} {ru_plural(dice, 'кость', 'кости', 'костей')}")


def with_seat(hint: Text, seat: Text) -> Text:
    """A hint followed by the barrel line: "A: throw five dice — on the barrel, needs 120 …"."""
    return f"{hint[0]} — {seat[0]}", f"{hint[1]} — {seat[1]}"


def barrel_status(need: int, used: int | None = None, attempts: int | None = None) -> Text:
    """The scoreboard's barrel line; ``used`` / ``attempts`` add the attempts counter (§3.6.2)."""
    en, ru = f"on the barrel, needs {need} in one turn", f"на бочке, нужно {need} за один ход"
    if attempts is not None:
        en += f" (attempts used: {used} of {attempts})"
        ru += f" (использовано попыток: {used} из {attempts})"
    return en, ru


def confirm_hint(n: int) -> Text:
    """Hint: the confirmation throw of all ``n`` dice is due (``confirm_and_bank``, §1.4)."""
    return (f"all dice have scored: you must make the confirmation throw of all {NUM_EN[n]}",
            f"все кости зачётные: обязателен бросок подтверждения всеми {n} костями")


def confirm_short_hint(hint: Text, short: Text) -> Text:
    """The confirmation hint extended: the turn is too short to record (``confirm_below_minimum: lose``, §6.5d)."""
    return (f"{hint[0]}; the turn is short ({short[0]}), so even a confirmed turn records nothing",
            f"{hint[1]}; очков хода мало ({short[1]}), поэтому даже подтверждённый ход ничего не запишет")


def hot_must_roll(n: int) -> Text:
    """Hot dice under ``must_roll`` (§1.4): all ``n`` dice must be thrown again."""
    return f"hot dice: you must throw all {NUM_EN[n]} again", f"все кости сыграли: нужно снова бросить все {NUM_RU[n]}"


def throw_or_stop(dice: int, points: int) -> Text:
    """Hint: throw ``dice`` dice or stop and record ``points`` (§1.6)."""
    return (f"throw {dice_en(dice)} or stop and record {points}",
            f"бросайте {count_ru(dice, 'die')} или скажите «хватит» и запишите {points}")


def throw_because(dice: int, why: Text) -> Text:
    """Hint: throw ``dice`` dice; ``why`` stopping is not allowed."""
    return f"throw {dice_en(dice)} ({why[0]})", f"бросайте {count_ru(dice, 'die')} ({why[1]})"


def keeps_automatic(faces: Sequence[int]) -> Text:
    """Refusal of a :class:`Keep` under ``all_scoring`` (§1.3): ``faces`` were set aside automatically."""
    return (f"all scoring dice ({_fmt(faces)}) are set aside automatically in these rules",
            f"в этих правилах все зачётные кости ({_fmt(faces)}) откладываются автоматически")


def no_choice(rules_name: str, key: str) -> Text:
    """Refusal of a game's own choice (``{KEY: VALUE}``, :class:`~kosti.engine.protocol.Choose`): the 1000
    family has none."""
    return f"{rules_name} has no choice {key!r}", f"в правилах {rules_name} нет выбора {key!r}"


def no_throw_to_keep() -> Text:
    """Refusal of a :class:`Keep` with no throw pending."""
    return "there is no throw to set dice aside from", "нет броска, из которого можно отложить кости"


def keep_one() -> Text:
    """Refusal of an empty keep (§1.3)."""
    return "set aside at least one scoring die", "нужно отложить хотя бы одну зачётную кость"


def may_not_stop(why: Text) -> Text:
    """Refusal of a stop, with the reason ``why`` (§1.6)."""
    return f"you may not stop: {why[0]}", f"остановиться нельзя: {why[1]}"


def nothing_to_record() -> Text:
    """Stop refused: nothing scored yet this turn (§1.6)."""
    return "nothing to record yet: throw the dice first", "записывать нечего: сначала бросьте кости"


def confirmation_due(n: int) -> Text:
    """Stop refused: the confirmation throw of all ``n`` dice is due (§1.4)."""
    return (f"all dice have scored: the confirmation throw of all {NUM_EN[n]} must be made",
            f"все кости сыграли: нужен бросок подтверждения всеми {n} костями")


def needs_opening(more: int, threshold: int) -> Text:
    """Stop refused: ``more`` points short of the opening ``threshold`` (§3.1)."""
    return (f"needs {more} more to open the game (opening {threshold})",
            f"нужно ещё {more}, чтобы открыть игру (вход {threshold})")


def needs_pit_exit(more: int, lo: int, hi: int) -> Text:
    """Stop refused: ``more`` points short of leaving the pit ``lo``–``hi`` (§3.3)."""
    return (f"needs {more} more to leave the pit ({lo}–{hi})",
            f"нужно ещё {more}, чтобы выбраться из ямы ({lo}–{hi})")


def needs_barrel_win(more: int, total: int) -> Text:
    """Stop refused on the barrel: ``more`` short of the ``total`` needed in one turn (§3.6)."""
    return (f"needs {more} more: on the barrel you need {total} in one turn and may stop only with a win",
            f"нужно ещё {more}: на бочке нужно {total} за один ход, остановиться можно только победой")


def not_exactly_target(target: int) -> Text:
    """Stop refused under ``strictly_above``: exactly ``target`` is not enough (§3.8)."""
    return (f"you may not stop on exactly {target}: go above it",
            f"нельзя остановиться ровно на {target}: нужно больше")


def wrong_dice_count(name: str, dice: int, offer: int, faces: Sequence[int]) -> Text:
    """A throw of the wrong number of dice: ``name`` must throw ``dice`` (or the ``offer`` left over by the
    previous player, 0: none), ``faces`` were given (§1.2)."""
    more = f" (or the {offer} left by the previous player)" if offer else ""
    more_ru = f" (или {offer}, оставленные предыдущим игроком)" if offer else ""
    return (f"{name} must throw {count_en(dice, 'die')}{more}, got {len(faces)} ({_fmt(faces) or 'none'})",
            f"{name}: нужно бросить {count_ru(dice, 'die')}{more_ru}, а введено {len(faces)} "
            f"({_fmt(faces) or 'ничего'})")


# ----------------------------------------------------------------------------------------------
# Throws and keeps (rules.md §1.2–§1.7, §3.10, §3.11, mid-turn §3.13)


def throw(name: str, faces: Sequence[int], points: int) -> Text:
    """A scoring throw of ``faces`` worth ``points`` (§1.2)."""
    return f"{name} throws {_fmt(faces)}: {points}", f"{name} бросает {_fmt(faces)}: {points}"


def throw_up_to(name: str, faces: Sequence[int], points: int) -> Text:
    """A scoring throw awaiting its keep, worth up to ``points`` (§1.3 ``at_least_one``)."""
    return f"{name} throws {_fmt(faces)}: up to {points}", f"{name} бросает {_fmt(faces)}: до {points}"


def throw_confirmation(name: str, faces: Sequence[int], points: int) -> Text:
    """The confirmation throw and its ``points`` (§1.4, §6.5a)."""
    return (f"{name} throws {_fmt(faces)}: {points} (confirmation)",
            f"{name} бросает {_fmt(faces)}: {points} (подтверждение)")


def turn_so_far(text: Text, points: int) -> Text:
    """A throw's sentence with the turn total appended: "… (turn 40)"."""
    return f"{text[0]} (turn {points})", f"{text[1]} (за ход {points})"


def toxic_twos(name: str, faces: Sequence[int]) -> Text:
    """Four or more 2s wipe the turn (F2 toxic twos, §3.11)."""
    return (f"{name} throws {_fmt(faces)}: toxic twos, the turn is wiped",
            f"{name} бросает {_fmt(faces)}: ядовитые двойки, ход сгорает")


def confirmation_failed(name: str, faces: Sequence[int], points: int) -> Text:
    """A zero confirmation throw: the turn's ``points`` are lost (§1.4)."""
    return (f"{name} throws {_fmt(faces)}: confirmation failed, the turn's {points} are lost",
            f"{name} бросает {_fmt(faces)}: подтверждение не удалось, {points} очков хода сгорают")


def retry(name: str, faces: Sequence[int]) -> Text:
    """A zero first throw with a second attempt (§1.7.1)."""
    return (f"{name} throws {_fmt(faces)}: nothing, second attempt",
            f"{name} бросает {_fmt(faces)}: пусто, вторая попытка")


def bust_word(farkle: bool) -> Text:
    """The table's one word for a zero throw (rules.md §0.3 "нулевая комбинация"): "bust" / «пусто» in 1000,
    "Farkle" / «фаркл» in the six-dice games — the same word in the engine's sentences, ``kosti score``,
    ``kosti play`` and on the dashboard."""
    return ("Farkle", "фаркл") if farkle else ("bust", "пусто")


def bust(name: str, faces: Sequence[int], lost: int, farkle: bool) -> Text:
    """A zero throw; ``lost`` turn points (0: none to lose); ``farkle``: the six-dice word."""
    word, word_ru = bust_word(farkle)
    tail = f", the turn's {lost} are lost" if lost else ""
    tail_ru = f", {lost} очков хода сгорают" if lost else ""
    return f"{name} throws {_fmt(faces)}: {word}{tail}", f"{name} бросает {_fmt(faces)}: {word_ru}{tail_ru}"


def high_stakes(name: str, bonus: int) -> Text:
    """The high-stakes ``bonus`` (F2, §3.11)."""
    return (f"{name} scores with the dice left over: +{bonus} bonus",
            f"{name} набирает очки оставленными костями: бонус +{bonus}")


def confirmed(name: str) -> Text:
    """A confirmation throw that records the turn (§1.4)."""
    return f"{name}: turn confirmed", f"{name}: ход подтверждён"


def confirmed_short(name: str, points: int, short: Text) -> Text:
    """A confirmed turn of ``points`` that may not be recorded, ``short`` why (§6.5d)."""
    return ((f"{name}: turn confirmed at {points}, but it may not be recorded ({short[0]}): nothing is "
             f"recorded, the turn passes"),
            (f"{name}: ход подтверждён с {points}, но записать его нельзя ({short[1]}): ничего не записано, "
             f"ход переходит"))


def keep(name: str, faces: Sequence[int], points: int, turn: int) -> Text:
    """Dice ``faces`` set aside for ``points``; ``turn``: the turn total (§1.3)."""
    return (f"{name} sets aside {_fmt(faces)}: +{points}, turn {turn}",
            f"{name} откладывает {_fmt(faces)}: +{points}, за ход {turn}")


def first_throw_opening(name: str, threshold: int) -> Text:
    """F3 literal opening: the first throw must bring ``threshold`` (§3.1)."""
    return (f"{name}: the first throw must bring {threshold} to open; the turn ends",
            f"{name}: для входа первый бросок должен дать {threshold}; ход окончен")


def dump_truck_running(name: str, value: int) -> Text:
    """The running total hits the dump truck's ``value`` (§3.5 ``running``)."""
    return f"{name} reaches {value}: dump truck! Score 0", f"{name} набирает {value}: самосвал! Счёт 0"


def hot_dice_confirm(name: str, n: int) -> Text:
    """Hot dice under ``confirm_and_bank``: the confirmation throw of ``n`` (§1.4)."""
    return (f"{name}: all dice scored, confirmation throw of {n}",
            f"{name}: все кости сыграли, бросок подтверждения {n} костями")


def hot_dice_must(name: str, n: int) -> Text:
    """Hot dice under ``must_roll``: all ``n`` dice again (§1.4)."""
    return (f"{name}: hot dice, must throw all {NUM_EN[n]} again",
            f"{name}: все кости сыграли, нужно снова бросить все {NUM_RU[n]}")


def hot_dice_may(name: str, n: int) -> Text:
    """Hot dice under ``may_roll_or_bank``: throw all ``n`` again or stop (§1.4)."""
    return (f"{name}: hot dice, may throw all {NUM_EN[n]} again or stop",
            f"{name}: все кости сыграли, можно бросить все {NUM_RU[n]} или остановиться")


def instant_win(name: str, faces: Sequence[int]) -> Text:
    """A throw of ``faces`` that wins at once (§3.10)."""
    return f"{name} wins instantly with {_fmt(faces)}!", f"{name} мгновенно побеждает: {_fmt(faces)}!"


def illegal_keep(kept: Sequence[int], dead: Sequence[int]) -> Text:
    """A keep with dead dice (rules.md §1.3 "no dead dice may be kept")."""
    listed = " ".join(map(str, dead))
    en = f"die {listed} belongs" if len(dead) == 1 else f"dice {listed} belong"
    ru = f"кость {listed} не входит" if len(dead) == 1 else f"кости {listed} не входят"
    shown = " ".join(map(str, kept))
    return (f"keep {shown} is not allowed: {en} to no scoring combination",
            f"так отложить нельзя ({shown}): {ru} ни в одну зачётную комбинацию")


def empty_keep() -> Text:
    """An empty keep refused by :func:`kosti.engine.scoring.score_keep` (§1.3)."""
    return "at least one scoring die must be kept", "нужно отложить хотя бы одну зачётную кость"


# ----------------------------------------------------------------------------------------------
# The end of a turn (rules.md §3.13 after-turn steps)


def capped(name: str, new: int, entry: int) -> Text:
    """A score ``new`` recorded as the ``capped`` barrel's ``entry`` (§3.6.4)."""
    return f"{name}: {new} is recorded as {entry} (barrel)", f"{name}: {new} записывается как {entry} (бочка)"


def seated_at_entry(name: str, new: int, entry: int, need: int) -> Text:
    """rules.md 1.1 §3.6.2: ``new`` recorded as ``entry``, seated; ``need`` to win."""
    return (f"{name}: {new} is recorded as {entry}, on the barrel; to win, {need} in one turn",
            f"{name}: {new} записывается как {entry}, на бочке; для победы нужно {need} за один ход")


def sit_first(name: str, recorded: int) -> Text:
    """rules.md 1.0 ``seat_score: actual``: must sit first; ``recorded`` instead (§3.6)."""
    return (f"{name}: must sit on the barrel first; recorded {recorded}",
            f"{name}: сначала нужно сесть на бочку; записано {recorded}")


def bank(name: str, points: int, before: int, after: int) -> Text:
    """The turn's ``points`` recorded: ``before`` → ``after`` (§1.6, §3.13 step 1)."""
    return f"{name} records {points}: {before} → {after}", f"{name} записывает {points}: {before} → {after}"


def opened(name: str) -> Text:
    """The opening threshold passed (§3.1)."""
    return f"{name} has opened the game", f"{name}: игра открыта"


def team_wins(names: str, total: int) -> Text:
    """Team ``names`` wins with ``total`` (F2 team play, §3.11)."""
    return f"team {names} wins with {total}!", f"побеждает команда {names} с {total}!"


def wins(name: str, score: int) -> Text:
    """Player ``name`` wins with ``score`` (§3.13 step 2)."""
    return f"{name} wins with {score}!", f"{name} побеждает с {score}!"


def final_round(name: str, score: int, owed: Sequence[str]) -> Text:
    """``name`` reaches ``score``: the final round for the players ``owed`` (§3.8)."""
    listed = ", ".join(owed)
    return (f"{name} reaches {score}: final round" + (f" for {listed}" if owed else ""),
            f"{name} набирает {score}: финальный круг" + (f" для {listed}" if owed else ""))


def climbs_barrel(name: str, score: int) -> Text:
    """``name`` climbs onto the barrel at ``score`` (§3.6)."""
    return f"{name} climbs onto the barrel at {score}", f"{name} залезает на бочку: {score}"


def knocked_off_by(name: str) -> Text:
    """The reason part of a knock-off fall: "knocked off by B"."""
    return f"knocked off by {name}", f"сбит игроком {name}"


def failed_attempts(count: int) -> Text:
    """The reason part of a fall after the last barrel attempt."""
    return f"{count} failed attempts", f"{count} неудачных попыток"


def fall_to_zero(name: str, why: Text, falls: int, max_falls: int) -> Text:
    """The ``max_falls``-th barrel fall: score 0 (§3.6.2); ``why``: the reason part."""
    return (f"{name} falls off the barrel ({why[0]}), fall {falls} of {max_falls}: score 0",
            f"{name} падает с бочки ({why[1]}), падение {falls} из {max_falls}: счёт 0")


def fall(name: str, why: Text, penalty: int) -> Text:
    """A barrel fall costing ``penalty`` (§3.6.2); ``why``: the reason part."""
    return f"{name} falls off the barrel ({why[0]}): −{penalty}", f"{name} падает с бочки ({why[1]}): −{penalty}"


def knocked_to_admission(sitter: str, by: str, back: int) -> Text:
    """RU-B: ``sitter`` knocked off by ``by`` back to his admission score ``back`` (§3.6.6)."""
    return (f"{sitter} is knocked off the barrel by {by}: back to {back}",
            f"{by} сталкивает {sitter} с бочки: назад на {back}")


def pushed_off(sitter: str, by: str, penalty: int) -> Text:
    """ID-D: ``sitter`` pushed off by ``by`` for ``penalty`` (§3.6.6)."""
    return (f"{sitter} is pushed off the barrel by {by}: −{penalty}",
            f"{by} сталкивает {sitter} с бочки: −{penalty}")


def attempt_failed(name: str, attempt: int, attempts: int) -> Text:
    """A failed barrel turn: attempt ``attempt`` of ``attempts`` (§3.6.2)."""
    return (f"{name}: barrel attempt {attempt} of {attempts} failed",
            f"{name}: попытка на бочке {attempt} из {attempts} не удалась")


def overtaken(mover: str, victim: str, penalty: int) -> Text:
    """Overtaking (§3.4): ``victim`` fined ``penalty``, passed by ``mover``."""
    return f"{mover} overtakes {victim}: {victim} −{penalty}", f"{victim} −{penalty}: обгон, впереди теперь {mover}"


def failed_openings_penalty(name: str, count: int, amount: int) -> Text:
    """RU-A: the ``count``-th failed opening costs ``amount`` (§3.1)."""
    return f"{name}: {count} failed openings: −{amount}", f"{name}: {count} неудачных входа: −{amount}"


def failed_opening_bolt(name: str, count: int) -> Text:
    """RU-A: a bolt for a failed opening (``count``, §3.1)."""
    return (f"{name} gets a bolt ({count}) for a failed opening",
            f"{name} получает болт ({count}) за неудачный вход")


def bolt_penalty(name: str, count: int, penalty: int) -> Text:
    """The ``count``-th bolt costs ``penalty`` (§3.2)."""
    return f"{name} gets bolt {count}: −{penalty}", f"{name} получает {count}-й болт: −{penalty}"


def bolt_fall(name: str) -> Text:
    """ID-D: the bolt limit on the barrel is the fall (§3.6, ``attempts_are_bolts``)."""
    return f"{name} falls off the barrel", f"{name} падает с бочки"


def bolt(name: str, count: int, limit: int) -> Text:
    """A bolt: ``count`` of ``limit`` (§3.2)."""
    return f"{name} gets a bolt ({count} of {limit})", f"{name} получает болт ({count} из {limit})"


def three_farkles(name: str, count: int, penalty: int) -> Text:
    """``count`` Farkles in a row cost ``penalty`` (§3.11)."""
    return f"{name}: {count} Farkles in a row: −{penalty}", f"{name}: {count} фаркла подряд: −{penalty}"


def dump_truck_landed(name: str, value: int) -> Text:
    """A recorded score or a fine lands on the dump truck's ``value`` (§3.5, §3.13 step 6)."""
    return f"{name} lands on {value}: dump truck! Score 0", f"{name} на {value}: самосвал! Счёт 0"


def pit(name: str, lo: int, hi: int, exit_value: int) -> Text:
    """``name`` lands in the pit ``lo``–``hi`` and must reach ``exit_value`` (§3.3)."""
    return (f"{name} is in the pit {lo}–{hi}: must reach {exit_value} in one turn",
            f"{name} в яме {lo}–{hi}: нужно за один ход набрать {exit_value}")


def skips_next(name: str, lo: int, hi: int) -> Text:
    """RU-C skip barrel ``lo``–``hi``: the next turn is skipped (§3.7)."""
    return (f"{name} is on the barrel {lo}–{hi}: skips the next turn",
            f"{name} на бочке {lo}–{hi}: пропускает следующий ход")


def still_on_skip_barrel(name: str, lo: int, hi: int, penalty: int | None) -> Text:
    """A failed extra turn (§3.7); ``penalty`` None = no fine (``extra_turn``)."""
    en = f"{name} is still on the barrel {lo}–{hi}: skips the next turn"
    ru = f"{name} всё ещё на бочке {lo}–{hi}: пропускает следующий ход"
    if penalty is not None:
        en += f" and loses {penalty}"
        ru += f" и теряет {penalty}"
    return en, ru


def extra_turn(name: str, lo: int, hi: int) -> Text:
    """RU-C skip barrel ``lo``–``hi`` with an extra turn (§3.7)."""
    return f"{name} is on the barrel {lo}–{hi}: extra turn", f"{name} на бочке {lo}–{hi}: дополнительный ход"


def dot(name: str, target: int, running: int, dots: int, limit: int) -> Text:
    """Open barrel: an overshoot to ``running`` is dot ``dots`` of ``limit`` (§3.6.3)."""
    return (f"{name} overshoots {target} ({running}): dot {dots} of {limit}, the turn is lost",
            f"{name}: перебор ({running}), точка {dots} из {limit}, ход сгорает")


def dots_to_zero(name: str, dots: int) -> Text:
    """Open barrel: ``dots`` dots at the last fall: score 0 (§3.6.3)."""
    return f"{name}: {dots} dots: score 0", f"{name}: {dots} точек: счёт 0"


def dots_penalty(name: str, dots: int, penalty: int) -> Text:
    """Open barrel: ``dots`` dots cost ``penalty`` (§3.6.3)."""
    return f"{name}: {dots} dots: −{penalty}", f"{name}: {dots} точек: −{penalty}"


def gift_lost(name: str, target: int, points: int, lowest: str) -> Text:
    """F2 welfare: the ``points`` would take ``lowest`` past ``target`` too, so they are lost (§3.8)."""
    return (f"{name} overshoots {target}: the turn's {points} would take {lowest} past it too, so they are lost",
            f"{name}: перебор; {points} очков хода вывели бы {lowest} за {target}, они сгорают")


def transfer(name: str, target: int, points: int, lowest: str) -> Text:
    """F2 welfare: the overshooting turn's ``points`` go to ``lowest`` (§3.8)."""
    return (f"{name} overshoots {target}: the turn's {points} go to {lowest}",
            f"{name}: перебор, {points} очков хода уходят игроку {lowest}")


def overshoot_alone(name: str, target: int) -> Text:
    """An overshoot of ``target`` under ``transfer_to_lowest`` with nobody to give to (§3.8)."""
    return f"{name} overshoots {target}: the turn is void", f"{name}: перебор, ход не засчитан"


def overshoot(name: str, target: int, running: int) -> Text:
    """An overshoot of the exact ``target`` to ``running``: the turn is void (§3.8)."""
    return (f"{name} overshoots {target} ({running}): the turn is void",
            f"{name}: перебор ({running}), ход не засчитан")


def overshoots_to_zero(name: str, count: int) -> Text:
    """RU-D: the ``count``-th overshoot sets the score to 0 (§3.8, §6.36)."""
    return f"{name}: {count} overshoots: score 0", f"{name}: {count} переборов: счёт 0"


def overshoots_penalty(name: str, count: int, penalty: int) -> Text:
    """RU-D: the ``count``-th overshoot costs ``penalty`` (§3.8, §6.36)."""
    return f"{name}: {count} overshoots: −{penalty}", f"{name}: {count} переборов: −{penalty}"


def final_round_over(names: str, count: int, best: int) -> Text:
    """The final round's end: ``names`` (``count`` of them) win with ``best`` (§3.8, §6.40)."""
    return (f"final round over: {names} win{'s' if count == 1 else ''} with {best}",
            f"финальный круг окончен: побеждает {names} с {best}")


def skips_turn(name: str) -> Text:
    """``name`` skips this turn (§3.7)."""
    return f"{name} skips this turn", f"{name} пропускает ход"


def next_turn(name: str, offer: int = 0) -> Text:
    """Who throws next; ``offer``: dice left over for the high-stakes bonus (0: none)."""
    if offer:
        return (f"{name} to throw (or play the {count_en(offer, 'die')} left over for the high-stakes bonus)",
                f"бросает {name} (или оставленные кости ({offer}) ради бонуса)")
    return f"{name} to throw", f"бросает {name}"


#: Every sentence by its code (the function's name).
TEXTS: dict[str, Callable[..., Text]] = {
    name: obj for name, obj in list(globals().items())
    if callable(obj) and not name.startswith("_") and getattr(obj, "__module__", None) == __name__
    and name not in ("faces_text", "dice_en", "render", "bust_word")
}


def render(code: str, **params: Any) -> Text:
    """The sentence ``code`` (a key of :data:`TEXTS`) with ``params``, as ``(english, russian)``.
    Raises ``KeyError`` for an unknown code and ``TypeError`` for missing / unknown parameters."""
    return TEXTS[code](**params)
