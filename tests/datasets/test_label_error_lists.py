"""The label-error lists (``datasets/label_errors/``) and their reader ``benchmarks/label_errors.py``, which keeps
photos with known wrong labels out of the numbers and out of the operating-point selection."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
import label_errors as le  # noqa: E402  (a benchmark script's sibling module)


class _Item:
    def __init__(self, stem: str, split: str = "val") -> None:
        self.label = Path(f"/x/labels/{split}/{stem}.txt")


def _write(folder: Path, name: str, doc: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(doc))
    return folder


def test_the_shipped_epanemu_list_reads_and_names_five_val_photos():
    assert "epanemu-dice" in le.listed_sets()
    split, stems = le.read_list("epanemu-dice")
    assert split == "val" and len(stems) == 5
    assert any(s.startswith("dice_90_jpg") for s in stems)


def test_listed_photos_are_dropped_for_their_split_only(tmp_path: Path):
    errors = _write(tmp_path, "demo", {"set": "demo", "split": "val", "errors": [
        {"label": "labels/val/b.txt", "wrong": "empty", "right": "two dice"}]})
    items = [_Item("a"), _Item("b"), _Item("c")]
    kept, dropped = le.without_label_errors(items, "demo", "val", errors)
    assert [i.label.stem for i in kept] == ["a", "c"] and dropped == 1
    assert le.without_label_errors(items, "demo", "test", errors) == (items, 0)  # the list is for val
    assert le.without_label_errors(items, "other", "val", errors) == (items, 0)  # no list
    with pytest.raises(ValueError, match="not in the set"):  # the list and the set disagree
        le.without_label_errors([_Item("a")], "demo", "val", errors)


@pytest.mark.parametrize("doc, why", [
    ({"split": "val"}, "errors"),
    ({"set": "other", "split": "val", "errors": []}, "other"),
    ({"set": "demo", "split": "val", "errors": [{"label": "labels/train/b.txt"}]}, "outside"),
    ("not a list", "not a label-error list"),
])
def test_a_malformed_list_is_a_one_line_error(tmp_path: Path, doc, why):
    errors = _write(tmp_path, "demo", doc)
    with pytest.raises(ValueError, match=why):
        le.read_list("demo", errors)
    (errors / "demo.json").write_text("{not json")
    with pytest.raises(ValueError, match="not a label-error list"):
        le.read_list("demo", errors)
