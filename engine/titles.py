"""Human names of the games and rule presets, and the Russian descriptions of the 1000 family.

A preset's ``name`` (``raznoobrazie_skip_barrels``) is an identifier for files, flags and JSON; players
read its title ("1000, skip-turn barrels (Goloviznin)" / «Тысяча с бочками пропуска хода (Головизнин)»).
The dashboard's rule menu and header, ``kosti rules`` and ``kosti play`` show the titles from here; the
1000-family presets' one-line descriptions are written in English in :mod:`kosti.engine.presets` (cli.md
``kosti rules --json`` keeps them as they are), and :data:`DESCRIPTIONS_RU` says the same in Russian with
the table's terms (rules.md §0.3: болт, яма, бочка, самосвал, обгон). Sources: rules.md §4 (the 1000
family, its source IDs RU-A … F6), games.md (the other games).
"""

from __future__ import annotations

__all__ = ["DESCRIPTIONS_RU", "FAMILY_TITLES", "GAME_TITLES", "PRESET_TITLES", "family_title", "preset_title"]

#: Title of each rule preset, ``(English, Russian)``.
PRESET_TITLES: dict[str, tuple[str, str]] = {
    # the 1000 family (rules.md §4.1–4.9)
    "classic": ("1000, classic", "Тысяча, классическая"),
    "classic_open_barrel": ("1000 with the open barrel", "Тысяча с открытой бочкой"),
    "variant2_850_barrel": ("1000, variant No. 2 (barrel at 850)", "Тысяча, вариант № 2 (бочка на 850)"),
    "soviet_box_track": ("1000, Soviet boxed game", "Тысяча, советская настольная игра"),
    "raznoobrazie_skip_barrels": ("1000 with skip-turn barrels (Goloviznin)",
                                  "Тысяча с бочками пропуска хода (Головизнин)"),
    "yard_dice_50": ("1000, yard game (entry 50)", "Тысяча, дворовая (вход 50)"),
    "farkle": ("Farkle", "Фаркл"),
    "ten_thousand": ("10000", "10000 (десять тысяч)"),
    "classic_no_barrel": ("1000, classic without barrels", "Тысяча, классическая без бочек"),
    "program_x50": ("1000, computer version (four of a kind × 50)",
                    "Тысяча, компьютерная версия (каре × 50)"),
    "zary_custom": ("1000, «zary» house rules", "Тысяча, правила «зари»"),
    "farkle_official": ("Farkle, boxed edition", "Фаркл, настольное издание"),
    "farkle_class_5000": ("Farkle to 5000 (classroom)", "Фаркл до 5000 (школьный)"),
    "dix_mille": ("Dix Mille (French 10000)", "Дикс-миль (французская 10000)"),
    "wikihow_10000": ("10000 (wikiHow rules)", "10000 (правила wikiHow)"),
    # the other games (games.md)
    "pig": ("Pig", "Свинья"),
    "craps": ("Craps", "Крэпс"),
    "craps_seed": ("Craps as the article writes it", "Крэпс, как в статье"),
    "aces": ("Aces", "Тузы"),
    "four_dice": ("Four dice", "Четыре кубика"),
    "dead_dice": ("Dead dice", "Отложи мёртвую"),
    "chicago": ("Chicago", "Чикаго"),
    "chicago_race": ("Chicago, race", "Чикаго, гонка"),
    "yacht": ("Sea dice / Yacht", "Морские кости / Яхта"),
    "buck_dice": ("Buck dice", "Бак Дайс"),
    "indian_dice": ("Indian dice", "Индийские кости"),
    "martinetti": ("Martinetti / Ohio", "Мартинетти / Огайо"),
    "high_dice": ("High dice", "Хай Дайс"),
    "bank_dice": ("Bank dice", "Банк на костях"),
    "thirteen": ("Thirteen", "Игра в 13"),
    "liar_dice": ("Liar dice", "Лжец"),
    "bluff": ("Bluff", "Блеф"),
}

#: The families the 1000 engine plays (the header of the page and of ``kosti rules``), ``(English, Russian)``.
FAMILY_TITLES: dict[str, tuple[str, str]] = {
    "1000": ("dice 1000", "Тысяча на костях"),
    "farkle": ("Farkle", "Фаркл"),
    "10000": ("10000", "10000 (десять тысяч)"),
}

#: Title of each game of games.md by game id (``kosti rules --json`` ``"game"``), ``(English, Russian)``.
GAME_TITLES: dict[str, tuple[str, str]] = {
    "pig": ("Pig", "Свинья"), "craps": ("Craps", "Крэпс"), "aces": ("Aces", "Тузы"),
    "four_dice": ("Four dice", "Четыре кубика"), "dead_dice": ("Dead dice", "Отложи мёртвую"),
    "chicago": ("Chicago", "Чикаго"), "yacht": ("Sea dice / Yacht", "Морские кости / Яхта"),
    "buck_dice": ("Buck dice", "Бак Дайс"), "indian_dice": ("Indian dice", "Индийские кости"),
    "martinetti": ("Martinetti / Ohio", "Мартинетти / Огайо"), "high_dice": ("High dice", "Хай Дайс"),
    "bank_dice": ("Bank dice", "Банк на костях"), "thirteen": ("Thirteen", "Игра в 13"),
    "liar_dice": ("Liar dice", "Лжец"), "bluff": ("Bluff", "Блеф"),
}

#: The family of each 1000-engine preset: Farkle (F2, F4, F5) and 10000 (F1, F3, F6) are played by the same
#: engine as 1000 (rules.md §4.7–4.9) but are other games to the players.
_FAMILY_OF = {"farkle": "farkle", "farkle_official": "farkle", "farkle_class_5000": "farkle",
              "ten_thousand": "10000", "dix_mille": "10000", "wikihow_10000": "10000"}

#: The 1000-family presets' descriptions in Russian (the English ones: ``Rules.description``, rules.md §4), without
#: the source ID that the English ones begin with (``kosti rules`` prints the source once, in brackets).
DESCRIPTIONS_RU: dict[str, str] = {
    "classic": "классические правила: вход 50, ямы 200–300 и 600–700, обгон −50, самосвал 555 "
               "(при записи), болты: 3 → −100, бочка по очкам: ход, кончившийся выше 880 (даже на 1000), "
               "записывает 880 и сажает игрока на бочку, дальше нужно 120 за один ход (3 попытки, −100, "
               "третье падение → 0); если все кости сыграли, бросать обязательно даже на 1000",
    "classic_open_barrel": "классика с открытой бочкой: для победы нужно ровно 1000 (если все кости "
                           "сыграли и вышло 1000 — победа сразу); перебор сразу даёт точку; шестая точка → 0",
    "variant2_850_barrel": "«вариант № 2»: отложить хотя бы одну зачётную кость, бросок подтверждения, "
                           "когда все кости сыграли (подтверждённый ход меньше 75 для входа или 150 на "
                           "бочке ничего не записывает), вход 75, бочка на 850 (нужно 150; догнавший "
                           "сбивает сидящего на бочке к его входному счёту)",
    "soviet_box_track": "советская настольная игра: каре ×100 (единицы как двойки), пять одинаковых — "
                        "победа сразу, дубль из двух костей = 0, вход 75, ямы 200–299 и 600–699, самосвал "
                        "555 посреди хода, болты: 3 → −50, бочка 900–999 (счёт остаётся настоящим; ход "
                        "снизу может выиграть; если все кости сыграли, бросать обязательно даже на 1000)",
    "raznoobrazie_skip_barrels": "по Головизнину: вход 75, пять одинаковых — победа сразу, бочки пропуска "
                                 "хода 300–400 / 600–700 / 900–960 (400 уже вне бочки; записавший счёт внутри "
                                 "пропускает следующий ход, пустой ход — нет), для победы ровно 1000 (если все "
                                 "кости сыграли и вышло 1000 — победа сразу; таблица очков восстановлена: "
                                 "список RU-C утерян, взяты значения T1)",
    "yard_dice_50": "«кости» от соседа: вход 50, болты: 3 → −50 (и до входа, и на бочке), самосвал 555 "
                    "посреди хода, обгон −50, бочка с 900 (счёт остаётся настоящим, ход снизу может "
                    "выиграть; 3 болта — падение, сбитый с бочки −50); если все кости сыграли, бросать "
                    "обязательно даже на 1000",
    "farkle": "фаркл, основные правила: 6 костей, стрит 3000, три пары 1500, зачётные кости выбираются свободно, когда "
              "все кости сыграли — можно бросать или записать, до 10000 с финальным кругом",
    "ten_thousand": "10000: 6 костей, таблица удвоений (каждая кость сверх трёх удваивает), стрит 1500, "
                    "три пары 1500; побеждает первый, набравший 10000",
    "classic_no_barrel": "классические правила без бочек: побеждает первый, набравший 1000 или больше "
                         "(если все кости сыграли, бросать обязательно даже на 1000)",
    "program_x50": "компьютерная версия: классические правила, каре = грань × 50, пять одинаковых = "
                   "1000; до 6 игроков, можно тренироваться одному; классическая бочка по очкам (ход выше "
                   "880 записывает 880, дальше 120 за один ход)",
    "zary_custom": "«зари»: каре = тройка + 10, пять единиц — победа сразу, вторая попытка после "
                   "пустого первого броска, вход 50, препятствия 300–400 и 750–900 (выход выше), обгон −55, "
                   "самосвал посреди хода, болты: 3 → −100, ровно 1000 (если все кости сыграли и вышло "
                   "1000 — победа сразу; 5 переборов −100, 10 → 0)",
    "farkle_official": "настольный фаркл: три пары 750, стрит 1000, три фаркла подряд −1000, финальный "
                       "круг",
    "farkle_class_5000": "школьный фаркл: значения F4 (допущение, §6.20), вход 350, игра до 5000, у всех "
                         "поровну ходов, три фаркла −1000",
    "dix_mille": "дикс-миль: каре ×2, пять одинаковых ×4, 1-2-3-4-5 = 1250 (у 2-6 только её пятёрка), "
                 "вход 750 за один ход, когда все кости сыграли — бросать обязательно (допущение; даже на "
                 "10000), до 10000",
    "wikihow_10000": "10000 по wikiHow: 4/5/6 одинаковых = 200/400/800 × грань (единицы 2000/4000/8000, "
                     "§6.17), стрит 1500, три пары 1500, до 10000",
}


def preset_title(name: str) -> tuple[str, str]:
    """The human name of preset ``name``, ``(English, Russian)``; an unknown name (a rules file's own
    ``name``) is its own title in both languages."""
    return PRESET_TITLES.get(name, (name, name))


def family_title(name: str) -> tuple[str, str]:
    """The game a 1000-engine preset belongs to, ``(English, Russian)``: "dice 1000" / «Тысяча на костях»,
    "Farkle" / «Фаркл» or "10000" (rules.md §4.7–4.9: Farkle and 10000 share the engine, not the name)."""
    return FAMILY_TITLES[_FAMILY_OF.get(name, "1000")]
