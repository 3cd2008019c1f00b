"""The shared sets' known label errors, as listed in ``datasets/label_errors/<set>.json`` (sibling module of the
benchmark scripts).

Each file names one set, the split its errors are in, and per error the label file (relative to the set's folder),
what it says and what is right. The files are the project's corrections: ``../shared`` is never edited. Where the
right boxes cannot be drawn here, the correction is to leave the photo out (``benchmarks/eval_label_errors.py``
for the numbers, ``benchmarks/select_operating_point.py`` so a wrong label never chooses an operating point).
"""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Where the lists live (one JSON document per shared set).
ERRORS = REPO / "datasets" / "label_errors"


def listed_sets() -> list[str]:
    """Names of the shared sets that have a list of label errors, sorted."""
    return sorted(p.stem for p in ERRORS.glob("*.json"))


def read_list(name: str) -> tuple[str, set[str]]:
    """The split and the stems of the label files listed as wrong for shared set ``name``.

    Args:
        name: shared set folder name (``"epanemu-dice"``).

    Returns:
        ``(split, stems)``, e.g. ``("val", {"dice_90_jpg.rf.625…", …})``.

    Raises:
        FileNotFoundError: the set has no list.
        ValueError: the list file is not the expected JSON document (no ``split`` or ``errors[].label``).
    """
    path = ERRORS / f"{name}.json"
    try:
        doc = json.loads(path.read_text())
        return str(doc["split"]), {Path(e["label"]).stem for e in doc["errors"]}
    except (KeyError, TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a label-error list ({exc})") from exc


def wrong_labels(name: str, split: str) -> set[str]:
    """Stems of the label files of ``name``'s ``split`` listed as wrong; empty when the set has no list or its
    list is for another split.

    Raises:
        ValueError: a malformed list (:func:`read_list`).
    """
    if not (ERRORS / f"{name}.json").is_file():
        return set()
    listed_split, stems = read_list(name)
    return stems if listed_split == split else set()
