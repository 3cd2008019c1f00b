"""The shared sets' known label errors, as listed in ``datasets/label_errors/<set>.json`` (sibling module of the
benchmark scripts).

Each file names one set (``set``, the file's own name), the split its errors are in (``split``) and per error the
label file (``label``, relative to the set's folder: ``labels/<split>/<stem>.txt``), what it says and what is
right. The files are the project's corrections: ``../shared`` is never edited. Where the right boxes cannot be
drawn here, the correction is to leave the photo out (:func:`without_label_errors`: ``benchmarks/
eval_label_errors.py`` for the numbers, ``benchmarks/select_operating_point.py`` so that a wrong label never
chooses an operating point). Where they can, an error carries a ``fix``: box-level operations
(:func:`read_fixes`) that :func:`corrected_report` applies to score the reader against the corrected labels.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

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


def read_fixes(name: str, errors: Path = ERRORS) -> dict[str, list[dict[str, Any]]]:
    """The box-level corrections of shared set ``name``: label stem → its list's ``fix`` operations.

    An error with a ``fix`` can be corrected box by box (:func:`apply_fix`); one without stays a photo to leave
    out. Operations (boxes as in YOLO label files: ``[cx, cy, w, h]`` normalised to the photo; faces 1–6):

    - ``{"line": L, "face": F}``: the ``L``-th box (1-based; the label file's ``L``-th non-blank line, as
      :func:`kosti.vision.evaluate.read_labels` reads it) shows face ``F``;
    - ``{"line": L, "face": null}``: a die is there, but its face cannot be counted at the photo's resolution;
    - ``{"line": L, "remove": true}``: no die there;
    - ``{"add": [cx, cy, w, h], "face": F}``: an unlabelled die showing ``F``; ``"face": null``: an unlabelled die
      (or a numeral die, which the set labels sometimes and sometimes not) whose face cannot be counted.

    A die whose face cannot be counted becomes an *ignore region*: a read on it is neither a found die nor a false
    box, and not finding it is no miss (COCO's ``iscrowd`` rule).

    Raises:
        ValueError: a malformed list or operation (names the label file).
    """
    read_list(name, errors)
    doc = json.loads((Path(errors) / f"{name}.json").read_text())
    fixes: dict[str, list[dict[str, Any]]] = {}
    for err in doc["errors"]:
        if "fix" not in err:
            continue
        ops = err["fix"]
        for op in ops if isinstance(ops, list) else [None]:
            ok = isinstance(op, dict) and (
                ("line" in op and isinstance(op["line"], int) and op["line"] >= 1
                 and (op.get("remove") is True or ("face" in op and op["face"] in (None, 1, 2, 3, 4, 5, 6))))
                or ("add" in op and len(op["add"]) == 4 and op.get("face", 0) in (None, 1, 2, 3, 4, 5, 6)))
            if not ok:
                raise ValueError(f"{name}: {err['label']}: malformed fix {op!r}")
        fixes[Path(err["label"]).stem] = ops
    return fixes


def apply_fix(xyxy: np.ndarray, values: np.ndarray, width: int, height: int,
              ops: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One photo's labels corrected by :func:`read_fixes` operations.

    Args:
        xyxy: ``(M, 4)`` float label boxes in pixels, in the label file's line order.
        values: ``(M,)`` int faces 1–6.
        width, height: the photo's size in pixels (for the normalised ``add`` boxes).
        ops: the photo's operations.

    Returns:
        ``(xyxy, values, ignore_xyxy)``: the corrected dice, and the ``(K, 4)`` boxes of dice whose face cannot be
        counted (ignore regions).

    Raises:
        ValueError: an operation names a line the file does not have.
    """
    xyxy, values = np.asarray(xyxy, np.float32).reshape(-1, 4), np.asarray(values).copy()
    keep = np.ones(len(values), bool)
    ignore: list[np.ndarray] = []
    added: list[tuple[np.ndarray, int]] = []
    for op in ops:
        if "line" in op:
            i = op["line"] - 1
            if i >= len(values):
                raise ValueError(f"fix names line {op['line']} of a {len(values)}-line label file")
            if op.get("remove") or op["face"] is None:
                keep[i] = False
                if not op.get("remove"):
                    ignore.append(xyxy[i])
            else:
                values[i] = op["face"]
        else:
            cx, cy, w, h = (float(v) for v in op["add"])
            box = np.array([(cx - w / 2) * width, (cy - h / 2) * height, (cx + w / 2) * width, (cy + h / 2) * height],
                           np.float32)
            if op.get("face") is None:
                ignore.append(box)
            else:
                added.append((box, int(op["face"])))
    out_xyxy = np.concatenate([xyxy[keep], np.array([b for b, _ in added], np.float32).reshape(-1, 4)])
    out_values = np.concatenate([values[keep], np.array([f for _, f in added], values.dtype)])
    return out_xyxy, out_values, np.array(ignore, np.float32).reshape(-1, 4)


def corrected_items(items: list[Any], name: str, split: str,
                    errors: Path = ERRORS) -> list[tuple[Any, list[dict[str, Any]] | None]]:
    """``items`` (a loaded split's :class:`kosti.vision.evaluate.LabelledImage` list) paired with their fix: photos
    listed with a ``fix`` get its operations (:func:`apply_fix`), photos listed without one are left out, the
    others get ``None`` (labels as shipped). Raises ValueError as :func:`without_label_errors`."""
    kept, _ = without_label_errors(items, name, split, errors)
    listed = {Path(i.label).stem for i in items} - {Path(i.label).stem for i in kept}
    fixes = read_fixes(name, errors) if listed else {}
    kept_stems = {Path(i.label).stem for i in kept} | set(fixes)
    return [(i, fixes.get(Path(i.label).stem)) for i in items if Path(i.label).stem in kept_stems]


def labelled_photos(root: Path, name: str, split: str, keep_label_errors: bool = False) -> Any:
    """Yield every photo of shared set ``name``'s ``split`` (the set's folder: ``root / name``) with its audited
    labels: ``(item, image, txyxy, tvals, ignore)`` — the :class:`kosti.vision.evaluate.LabelledImage`, the
    ``(H, W, 3)`` uint8 BGR photo, its label boxes ``(N, 4)`` float32 (pixels) and faces ``(N,)`` int8 after the
    list's ``fix`` (:func:`apply_fix`), and its ignore regions ``(G, 4)`` float32. Photos listed without a fix are
    left out (:func:`corrected_items`), unless ``keep_label_errors`` (then every photo, labels as shipped).

    Raises:
        ValueError: a malformed label-error list, or one naming a label file the split lacks.
        kosti.vision.evaluate.DatasetError: the set or split is missing.
        kosti.vision.reader.ImageReadError: a photo cannot be read.
    """
    from kosti.vision.evaluate import load_dataset, read_labels
    from kosti.vision.reader import load_image

    ds = load_dataset(Path(root) / name, split)
    items = [(i, None) for i in ds.items] if keep_label_errors else corrected_items(ds.items, name, split)
    for item, fix in items:
        img = load_image(item.image)
        h, w = img.shape[:2]
        txyxy, tvals = read_labels(item.label, w, h, ds.class_values)
        ignore = np.zeros((0, 4), np.float32)
        if fix is not None:
            txyxy, tvals, ignore = apply_fix(txyxy, tvals, w, h, fix)
        yield item, img, txyxy, tvals, ignore


def on_ignore_region(pred_xyxy: np.ndarray, true_xyxy: np.ndarray, ignore_xyxy: np.ndarray) -> np.ndarray:
    """``(K,)`` bool: which of the reads ``pred_xyxy`` ``(K, 4)`` lie on an ignore region (IoU ≥ 0.5 with one of
    ``ignore_xyxy`` ``(G, 4)``) and on no labelled die (IoU ≥ 0.5 with one of ``true_xyxy`` ``(M, 4)``); boxes in
    pixels."""
    from kosti.vision.detections import box_iou

    pred_xyxy = np.asarray(pred_xyxy, np.float32).reshape(-1, 4)
    if not len(ignore_xyxy) or not len(pred_xyxy):
        return np.zeros(len(pred_xyxy), bool)
    on_ignore = (box_iou(np.asarray(ignore_xyxy, np.float32), pred_xyxy) >= 0.5).any(0)
    on_die = (box_iou(np.asarray(true_xyxy, np.float32).reshape(-1, 4), pred_xyxy) >= 0.5).any(0) \
        if len(true_xyxy) else np.zeros(len(pred_xyxy), bool)
    out: np.ndarray = np.asarray(on_ignore & ~on_die, bool)
    return out


def corrected_report(report: Any, name: str, split: str, errors: Path = ERRORS) -> tuple[Any, int, int]:
    """An :class:`kosti.vision.evaluate.EvalReport` scored again against the set's corrected labels.

    Photos whose error has a ``fix`` are scored against their corrected labels, with every read on an ignore
    region (IoU ≥ 0.5 with it, and not with a corrected die) taken out; photos listed without a fix are left out;
    the others are scored as before. The reader's reads are those of ``report`` (nothing is read again); mAP is not
    recomputed (the low-threshold boxes are not kept), so only the working-point numbers are meaningful.

    Returns:
        ``(report, corrected, dropped)``: the new report, how many photos were corrected, how many left out.
    """
    from kosti.vision.evaluate import evaluate_predictions

    listed_split, wrong = read_list(name, errors) if (Path(errors) / f"{name}.json").is_file() else (split, set())
    fixes = read_fixes(name, errors) if listed_split == split and wrong else {}
    truths, preds, ms, n_fixed, n_dropped = [], [], [], 0, 0
    for rec in report.records:
        stem, det, txyxy, tvals = Path(rec.image).stem, rec.pred, rec.true_xyxy, rec.true_values
        if listed_split == split and stem in wrong:
            if stem not in fixes:
                n_dropped += 1
                continue
            h, w = _image_size(rec.image)
            txyxy, tvals, ignore = apply_fix(txyxy, tvals, w, h, fixes[stem])
            det = det[~on_ignore_region(det.xyxy, txyxy, ignore)]
            n_fixed += 1
        truths.append((rec.image, txyxy, tvals))
        preds.append(det)
        ms.append(rec.ms)
    return evaluate_predictions(truths, preds, None, ms), n_fixed, n_dropped


def _image_size(path: Path) -> tuple[int, int]:
    """``(height, width)`` of an image file."""
    from kosti.vision.reader import load_image

    h, w = load_image(path).shape[:2]
    return int(h), int(w)
