"""Words a player reads (issue 42 items 8 and 9): counting words in English and Russian from one place
(:mod:`kosti.engine.plurals`), the human names of the presets, ``kosti rules`` grouped under each game and
aligned, ``kosti play --lang ru`` and ``kosti score`` in the table's words."""

from __future__ import annotations

import re

import pytest

from kosti.cli import main
from kosti.engine import PRESET_NAMES
from kosti.engine.errors import BadInput, RuleViolation
from kosti.engine.games import GAME_PRESETS, new_any_game
from kosti.engine.plurals import NOUNS, count, count_en, count_ru, en_form, ru_form
from kosti.engine.titles import DESCRIPTIONS_RU, PRESET_TITLES, family_title, preset_title


@pytest.mark.parametrize("n, want", [
    (0, "0 костей"), (1, "1 кость"), (2, "2 кости"), (4, "4 кости"), (5, "5 костей"), (11, "11 костей"),
    (12, "12 костей"), (14, "14 костей"), (21, "21 кость"), (22, "22 кости"), (25, "25 костей"),
    (101, "101 кость"), (111, "111 костей"), (112, "112 костей"), (122, "122 кости"),
])
def test_russian_dice_take_the_form_of_their_number(n, want):
    assert count_ru(n, "die") == want


def test_english_counts_are_singular_only_for_one():
    assert [count_en(n, "die") for n in (0, 1, 2)] == ["0 dice", "1 die", "2 dice"]
    assert count_en(1, "game") == "1 game" and count_en(1, "zero throw") == "1 zero throw"
    assert count_en(3, "zero throw") == "3 zero throws" and count(-1, "point") == "-1 point"
    assert count(2, "turn", "ru") == "2 хода" and count(5, "turn", "ru") == "5 ходов"


def test_plural_categories_follow_cldr_for_every_noun():
    """The CLDR categories (the browser's Intl.PluralRules uses the same; a browser test compares them)."""
    cats = {n: ru_form(n) for n in range(0, 130)}
    assert {n for n, c in cats.items() if c == "one"} == {1, 21, 31, 41, 51, 61, 71, 81, 91, 101, 121}
    assert {n for n, c in cats.items() if c == "few"} == {
        n for n in range(130) if n % 10 in (2, 3, 4) and n % 100 not in (12, 13, 14)}
    assert [en_form(n) for n in (0, 1, 2, 11)] == ["other", "one", "other", "other"]
    for key, (en, ru) in NOUNS.items():
        assert count_en(1, key) == f"1 {en[0]}" and count_ru(5, key) == f"5 {ru[2]}", key


def test_every_preset_has_a_human_name_and_a_russian_description():
    for name in (*PRESET_NAMES, *GAME_PRESETS):
        en, ru = preset_title(name)
        assert name in PRESET_TITLES and en and ru and "_" not in en + ru, name
    for name in PRESET_NAMES:
        assert DESCRIPTIONS_RU[name] and re.search("[а-я]", DESCRIPTIONS_RU[name]), name
    assert family_title("farkle_official") == ("Farkle", "Фаркл") and family_title("classic")[0] == "dice 1000"


def test_kosti_rules_groups_the_presets_under_their_game_and_aligns_them(capsys):
    assert main(["rules", "--lang", "en"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    # each preset line: two spaces, the name padded to one column, its title from the same column
    rows = [ln for ln in lines if re.match(r"  [a-z][a-z0-9_]+ ", ln)]
    names = {ln.split()[0] for ln in rows}
    assert names == set(PRESET_NAMES) | set(GAME_PRESETS)
    starts = {len(ln) - len(ln[2:].split(" ", 1)[1].lstrip()) for ln in rows}
    assert len(starts) == 1, starts  # indian_dice, martinetti … as aligned as classic
    # the Farkle presets under Farkle, not under 1000
    heads = [i for i, ln in enumerate(lines) if ln and not ln.startswith(" ")]
    section = {lines[h]: lines[h + 1:(heads + [len(lines)])[k + 1]] for k, h in enumerate(heads)}
    farkle_names = {ln.split()[0] for ln in section["Farkle"] if re.match(r"  [a-z]", ln)}
    assert farkle_names == {"farkle", "farkle_official", "farkle_class_5000"}
    assert not any(n.startswith("farkle") for ln in section["dice 1000"] for n in ln.split()[:1])
    # counting words and the source said once
    assert "Pig — 1 die, to 100 [games.md §6]" in out and "1 dice" not in out and " dice, [" not in out
    assert "[RU-A] RU-A" not in out and "RU-A classic rules" not in out and "[RU-A]" in out


def test_kosti_rules_speaks_russian(capsys):
    assert main(["rules", "--lang", "ru"]) == 0
    out = capsys.readouterr().out
    assert "Тысяча, классическая — 5 костей, до 1000 [RU-A]" in out
    assert "Свинья — 1 кость, до 100" in out and "Фаркл" in out
    assert "классические правила: вход 50, ямы 200–300 и 600–700" in out
    assert "classic rules" not in out  # no English description in Russian mode


def test_kosti_rules_json_keeps_the_contract(capsys):
    import json

    assert main(["rules", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    for p in doc["presets"]:
        assert {"name", "game", "dice", "target", "description", "source", "parameters"} <= set(p)
    assert {p["name"] for p in doc["presets"]} == set(PRESET_NAMES) | set(GAME_PRESETS)


def test_kosti_play_in_russian_names_and_describes_the_rules(capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("11123\n22346\nfoo\nquit\n"))
    assert main(["play", "--players", "Аня,Боря", "--lang", "ru"]) == 0
    out = capsys.readouterr().out
    assert "Правила: Тысяча, классическая (classic) — классические правила: вход 50" in out
    assert "? Аня: нужно бросить 2 кости, а введено 5 (2 2 3 4 6)" in out
    assert "? это не очки и не команда: 'foo'" in out
    assert not re.search(r"\b(must|got|not a face|Rules)\b", out), out


def test_kosti_play_pig_counts_one_die(capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("3 4\nquit\n"))
    assert main(["play", "--rules", "pig", "--players", "Ann,Boris", "--lang", "en"]) == 0
    out = capsys.readouterr().out
    assert "Rules: Pig (pig) — Pig (Свинья)" in out and "throw exactly 1 die, got 2" in out


def test_a_bust_is_one_word_everywhere(capsys):
    assert main(["score", "2", "2", "3", "4", "6"]) == 0
    out = capsys.readouterr().out
    assert "BUST / пусто" in out and "пшик" not in out
    g = new_any_game("classic", ["A", "B"])
    from kosti.engine.game import Roll

    _, events = g.apply(Roll((2, 2, 3, 4, 6)))
    assert any("пусто" in e.text_ru for e in events)
    assert main(["score", "--rules", "farkle", "2", "2", "3", "4", "6", "3"]) == 0
    assert "FARKLE / фаркл" in capsys.readouterr().out


def test_an_error_names_no_internal_table():
    with pytest.raises(BadInput) as info:
        new_any_game({"preset": "classic", "overrides": {"dice_count": 6}}, ["A"])
    msg = str(info.value)
    assert "CLASSIC_X20" not in msg and "5 dice" in msg and "Farkle or 10000" in msg


def test_counts_in_the_engines_sentences():
    from kosti.engine import texts
    from kosti.engine.game import Roll

    assert texts.first_throw_hint("Ann", 1) == ("Ann: throw one die", "Ann: бросайте одну кость")
    assert texts.first_throw_hint("Ann", 5) == ("Ann: throw five dice", "Ann: бросайте пять костей")
    assert texts.throw_or_stop(1, 50)[1] == "бросайте 1 кость или скажите «хватит» и запишите 50"
    assert "the 1 die left over" in texts.next_turn("Ann", 1)[0]
    g = new_any_game({"preset": "buck_dice", "overrides": {}}, ["Ann", "Boris"])
    for faces in ((6, 6, 5), (1, 2, 1), (4,)):  # set-up: Ann starts; Boris's die makes 4 the game point
        g, _ = g.apply(Roll(faces))
    _, events = g.apply(Roll((4, 2, 3)))
    assert any(e.text_en.endswith("1 × 4, 1 point") for e in events), [e.text_en for e in events]


def test_kosti_play_prompt_counts_the_dice(capsys, monkeypatch):
    import io

    for lang, want in (("en", "[Ann: turn 105, 1 die] throw 1 die or stop and record 105"),
                       ("ru", "[Ann: за ход 105, 1 кость] бросайте 1 кость или скажите «хватит» и запишите 105")):
        monkeypatch.setattr("sys.stdin", io.StringIO("1 1 1 2 5\nquit\n"))
        assert main(["play", "--players", "Ann,Boris", "--lang", lang]) == 0
        out = capsys.readouterr().out
        assert want in out and "1 dice" not in out and "1 костей" not in out, out


def test_other_games_count_their_words():
    """No "(s)": Indian dice's stop, Bank dice's bets, High dice's extra throws count in both languages."""
    from kosti.engine.game import Bank, Roll

    g = new_any_game("indian_dice", ["Ann", "Boris"])
    g, _ = g.apply(Roll((2, 2, 3, 4, 6)))
    _, events = g.apply(Bank())
    stop = next(e for e in events if e.kind == "stop")
    assert (stop.text_en, stop.text_ru) == ("Ann stops after 1 throw", "Ann: «хватит» после 1 броска")
    b = new_any_game("bank_dice", ["Ann", "Boris", "Cid"])
    assert b.status() is not None and b.status().text_en == "round 1: 0 bets"
    from kosti.engine.games import Choose

    b, _ = b.apply(Choose("bet", "Boris 3 2"))
    assert (b.status().text_en, b.status().text_ru) == ("round 1: 1 bet", "раунд 1: 1 ставка")
    h = new_any_game({"preset": "high_dice", "overrides": {"extra_throws": 1}}, ["Ann", "Boris"])
    h, _ = h.apply(Choose("stake", 1))
    h, _ = h.apply(Roll((6, 6)))  # the banker's 12
    h, _ = h.apply(Roll((1, 2)))  # the punter fails: one extra throw left
    hint = h.moves().hint
    assert "(1 extra throw left) or accept the loss of 1 stake" in hint.text_en, hint.text_en
    assert "в запасе 1 дополнительный бросок" in hint.text_ru and "проигрыш: 1 ставка" in hint.text_ru
    assert "(s)" not in hint.text_en


def test_refusals_in_kosti_play_say_no_twice(capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("3 4\nbank\nquit\n"))
    assert main(["play", "--rules", "chicago", "--players", "Аня,Боря", "--lang", "both"]) == 0
    out = capsys.readouterr().out
    assert "Not allowed: every throw counts: there is no stopping" in out
    assert "Нельзя: каждый бросок идёт в зачёт" in out and "Нельзя: остановиться нельзя" not in out
    monkeypatch.setattr("sys.stdin", io.StringIO("3\n2\nbank\nquit\n"))
    assert main(["play", "--rules", "pig", "--players", "Аня,Боря", "--lang", "ru"]) == 0
    out = capsys.readouterr().out
    assert "Остановиться нельзя: сначала бросьте хотя бы раз в этой серии" in out and "Нельзя: остановиться" not in out


@pytest.mark.parametrize("name", sorted(GAME_PRESETS))
def test_russian_sentences_fit_any_player(name):
    """A player may be Аня as well as Боря: the games' Russian sentences about a player use the present tense
    ("Аня выбрасывает 3 4"), never a masculine past ("Аня выбросил")."""
    import random

    from kosti.engine.game import Bank, Roll

    masculine = re.compile(r"\b(выбросил|бросил|набрал|объявил|обыграл|проиграл|победил|выиграл|выбыл|попал|он|его|ему)\b"
                           r"|\bу (Аня|Боря)\b")  # nor a pronoun, nor a name a preposition would have to decline
    for seed in range(4):
        rng = random.Random(seed)
        g = new_any_game(name, ["Аня", "Боря"])
        for _ in range(400):
            if g.over:
                break
            m = g.moves()
            texts = [m.hint.text_ru, *(c.label_ru for c in m.choices), *(ru for i in range(2) for _, ru in g.marks(i))]
            assert not [t for t in texts if masculine.search(t)], texts
            acts = [Roll(tuple(rng.randint(1, 6) for _ in range(m.dice)))] if m.roll else []
            c = g.random_choice(rng)
            if c is not None:
                acts.append(c)
            if m.bank and rng.random() < 0.3:
                acts.append(Bank())
            if not acts:
                break
            try:
                g, events = g.apply(rng.choice(acts))
            except (BadInput, RuleViolation):
                continue
            bad = [e.text_ru for e in events if masculine.search(e.text_ru)]
            assert not bad, bad


def test_the_tools_counting_words_too():
    """Backups, clips and frames are counted through the same module (kosti backup, kosti datasets clips)."""
    from kosti.engine.plurals import count

    assert [count(n, "action") for n in (1, 2)] == ["1 action", "2 actions"]
    assert [count(n, "clip", "ru") for n in (1, 3, 5, 21)] == ["1 ролик", "3 ролика", "5 роликов", "21 ролик"]
    assert count(1, "frame") == "1 frame" and count(12, "frame", "ru") == "12 кадров"
    assert count(1, "expected throw") == "1 expected throw" and count(2, "expected throw", "ru") == "2 ожидаемых броска"
