"""The shared sets' known label errors, as listed in ``datasets/label_errors/<set>.json`` (sibling module of the
benchmark scripts).

Each file names one set (``set``, the file's own name), the split its errors are in (``split``) and per error the
label file (``label``, relative to the set's folder: ``labels/<split>/<stem>.txt``), what it says and what is
right. The files are the project's corrections: ``../shared`` is never edited. Where the right boxes cannot be
drawn here, the correction is to leave the photo out (:func:`without_label_errors`: ``benchmarks/
eval_label_errors.py`` for the numbers, ``benchmarks/select_operating_point.py`` so that a wrong label never
chooses an operating point).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
#: Where the lists live (one JSON document per shared set).
ERRORS = REPO / "datasets" / "label_errors"


def listed_sets(errors: Path = ERRORS) -> list[str]:
    """Names of the shared sets that have a list of label errors in ``errors``, sorted."""
    return sorted(p.stem for p in Path(errors).glob("*.json"))


def read_list(name: str, errors: Path = ERRORS) -> tuple[str, set[str]]:
    """The split and the stems of the label files listed as wrong for shared set ``name``.

    Args:
        name: shared set folder name (``"epanemu-dice"``); the list is ``errors/<name>.json``.
        errors: the folder of the lists.

    Returns:
        ``(split, stems)``, e.g. ``("val", {"dice_90_jpg.rf.625…", …})``.

    Raises:
        FileNotFoundError: the set has no list.
        ValueError: the file is not a label-error list: not JSON, no ``split`` or ``errors[].label``, a ``set``
            other than ``name``, or a label path outside ``labels/<split>/``.
    """
    path = Path(errors) / f"{name}.json"
    try:
        doc = json.loads(path.read_text())
        split, labels = str(doc["split"]), [Path(e["label"]) for e in doc["errors"]]
        if doc.get("set", name) != name:
            raise ValueError(f"it lists set {doc['set']!r}")
        outside = [str(p) for p in labels if p.parent != Path("labels") / split]
        if outside:
            raise ValueError(f"label files outside labels/{split}/: {outside}")
    except (KeyError, TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a label-error list ({exc!r})") from exc
    except ValueError as exc:
        raise ValueError(f"{path}: not a label-error list ({exc})") from exc
    return split, {p.stem for p in labels}


def without_label_errors(items: list[Any], name: str, split: str, errors: Path = ERRORS) -> tuple[list[Any], int]:
    """``items`` (a loaded split's :class:`kosti.vision.evaluate.LabelledImage` list: each has ``.label``, a path)
    without the photos whose label files the set's list names for ``split``.

    Returns:
        ``(kept, dropped)``: the other items in their order, and how many were left out (0 when the set has no
        list or its list is for another split).

    Raises:
        ValueError: a malformed list (:func:`read_list`), or a listed label file that is not among ``items``
            (the list and the set disagree, so the numbers would silently include a known error).
    """
    if not (Path(errors) / f"{name}.json").is_file():
        return list(items), 0
    listed_split, wrong = read_list(name, errors)
    if listed_split != split:
        return list(items), 0
    missing = wrong - {Path(item.label).stem for item in items}
    if missing:
        raise ValueError(f"{name} {split}: listed label files not in the set: {sorted(missing)}")
    kept = [item for item in items if Path(item.label).stem not in wrong]
    return kept, len(items) - len(kept)
