"""rules.md §5 scoring vectors (S-xx single-throw rows, V-01..V-113), one test per vector.

The vectors are transcribed in ``engine/data/score_vectors.json`` (see its ``about``); each test
runs its vector under every preset the row names. Real preset names use the shipped registry
(:func:`kosti.engine.presets.get_preset`), so the vectors check the product's presets; names with a
``+`` are the variant switches noted in the §5.2 rows and use the file's own setup.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kosti.engine.presets import PRESET_NAMES, get_preset
from kosti.engine.scoring import IllegalKeep, ScoringRules, legal_keeps, score_keep, score_throw

DATA = json.loads((Path(__file__).resolve().parents[2] / "engine" / "data"
                   / "score_vectors.json").read_text(encoding="utf-8"))
FILE_PRESETS = {name: ScoringRules.from_dict(d) for name, d in DATA["presets"].items()}
PRESETS = {name: get_preset(name).scoring if name in PRESET_NAMES else rules
           for name, rules in FILE_PRESETS.items()}


@pytest.mark.parametrize("name", sorted(n for n in FILE_PRESETS if "+" not in n))
def test_vector_file_presets_are_the_shipped_presets(name: str) -> None:
    """The scoring setup written in the vector file is the registry's (rules.md §4)."""
    assert name in PRESET_NAMES
    assert get_preset(name).scoring == FILE_PRESETS[name]


def _presets(vector: dict) -> list[str]:
    out: list[str] = []
    for name in vector["presets"]:
        out.extend(DATA["groups"][name[6:]] if name.startswith("group:") else [name])
    return out


def test_vector_ids_are_unique_and_cover_section_5_2() -> None:
    ids = [v["id"] for v in DATA["vectors"]]
    assert len(ids) == len(set(ids))
    for n in range(1, 114):  # every V-row of rules.md §5.2 is transcribed
        assert f"V-{n:02d}" in ids or f"V-{n}" in ids, n


@pytest.mark.parametrize("vector", DATA["vectors"], ids=[v["id"] for v in DATA["vectors"]])
def test_vector(vector: dict) -> None:
    for preset in _presets(vector):
        rules = PRESETS[preset]
        kind = vector["kind"]
        where = f"{vector['id']} under {preset}"
        if kind == "throw":
            got = score_throw(vector["throw"], rules)
            assert got.faces == tuple(sorted(vector["throw"])), where
            if vector.get("bust"):
                assert got.bust and got.points == 0 and got.scoring_dice == (), where
                assert got.remaining_dice == len(vector["throw"]) and not got.hot_dice, where
                assert legal_keeps(vector["throw"], rules) == [], where
                continue
            assert not got.bust, where
            assert got.points == vector["points"], where
            assert got.scoring_dice == tuple(sorted(vector["keep"])), where
            assert got.remaining_dice == vector["remaining"], where
            assert got.hot_dice == (vector["remaining"] == 0), where
            assert got.instant_win == (preset in vector.get("instant_win_in", [])), where
            assert sum(c.points for c in got.combinations) == got.points, where
            assert sorted(f for c in got.combinations for f in c.faces) == sorted(vector["keep"])
            if "combinations" in vector:
                assert sorted(c.name for c in got.combinations) == sorted(vector["combinations"])
        elif kind == "keeps":
            got = {(k.scoring_dice, k.points) for k in legal_keeps(vector["throw"], rules)}
            want = {(tuple(sorted(k)), pts) for k, pts in vector["keeps"]}
            assert got == want, where
            if not want:
                assert score_throw(vector["throw"], rules).bust, where
        elif kind == "keep":
            for keep, points in vector["cases"]:
                assert score_keep(keep, rules).points == points, f"{where}: {keep}"
                # a keep of dice that all score is also the best keep of that throw
                assert score_throw(keep, rules).points == points, f"{where}: {keep}"
        elif kind == "keep_sum":
            throws = vector.get("throws", [None] * len(vector["keeps"]))
            total = sum(score_keep(k, rules, throw=t).points
                        for k, t in zip(vector["keeps"], throws))
            assert total == vector["points"], where
        elif kind == "illegal_keep":
            with pytest.raises(IllegalKeep):
                score_keep(vector["keep"], rules, throw=vector["throw"])
        else:  # pragma: no cover - data error
            raise AssertionError(f"unknown vector kind {kind!r}")
