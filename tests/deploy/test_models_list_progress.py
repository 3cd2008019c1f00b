"""``kosti models list`` says why its first listing takes a while (issue 42 #12).

The first listing was silent for ~10 s: not an import (``python -X importtime``: under 0.5 s, no torch), but every
reference photo read with the version's reader to measure it, once, before the numbers are cached in the registry.
It now says so on stderr (``--json`` stays one document on stdout), and a cached listing says nothing.
"""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import ci_guard
import pytest

from kosti.models_cli import main as models_main
from kosti.models_cli import measuring_progress

BYLER = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "byler-d6"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def three_reference_photos(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The reference set cut to three labelled byler-d6 photos (the real reader reads them, in seconds)."""
    if not BYLER.exists():
        ci_guard.missing(f"shared dataset not found: {BYLER} (expected beside the repository, see README)")
    ref = tmp_path / "ref"
    for sub in ("images", "labels"):
        (ref / sub).mkdir(parents=True)
    for img in sorted((BYLER / "images" / "test").iterdir())[:3]:
        shutil.copy2(img, ref / "images" / img.name)
        shutil.copy2(BYLER / "labels" / "test" / f"{img.stem}.txt", ref / "labels" / f"{img.stem}.txt")
    monkeypatch.setattr("kosti.datasets.replay.reference", lambda: (ref, "train"))
    return ref


def test_the_first_listing_says_what_it_reads_and_a_cached_one_is_quiet(tmp_path, three_reference_photos, capsys):
    root = tmp_path / "reg"
    assert models_main(["list", "--registry", str(root), "--json"]) == 0
    out, err = capsys.readouterr()
    doc = json.loads(out)  # stdout: still exactly one JSON document
    assert doc["versions"][0]["version"] == "shipped" and doc["versions"][0]["reference"]["images"] == 3
    lines = err.splitlines()
    assert lines[0] == (f"kosti models: measuring 'shipped' on the reference set, 3 photos (once; the numbers are "
                        f"kept in {root}) ...")
    assert re.fullmatch(r"kosti models: 'shipped' measured in \d+ s", lines[1]) and len(lines) == 2
    assert models_main(["list", "--registry", str(root), "--json"]) == 0
    out2, err2 = capsys.readouterr()
    assert err2 == "" and json.loads(out2) == doc  # the cached numbers, without a word
    assert models_main(["list", "--registry", str(tmp_path / "other"), "--no-measure"]) == 0
    assert capsys.readouterr().err == ""  # nothing measured, nothing said


def test_a_terminal_sees_the_photo_count_go_up_in_place(tmp_path):
    term = _Terminal()
    seen = list(measuring_progress("v3", tmp_path, term)(iter("abc")))
    assert seen == ["a", "b", "c"]  # every photo passes through, in order
    text = term.getvalue()
    assert "measuring 'v3' on the reference set, 3 photos" in text
    assert "\r  1/3 photos\r  2/3 photos\r  3/3 photos\nkosti models: 'v3' measured in " in text
    pipe = io.StringIO()
    list(measuring_progress("v3", tmp_path, pipe)(iter("abc")))
    assert "\r" not in pipe.getvalue() and pipe.getvalue().count("\n") == 2  # a log gets two plain lines
