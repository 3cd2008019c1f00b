"""Pictures for ``kosti eval --plots DIR``: a confusion matrix, the images the reader got wrong, and sheets of every
die it did not read right (``dice/sheet_NN.png``, listed in ``dice/dice.csv``), cropped so that the dice of a whole
split can be looked at side by side.

Drawn with OpenCV's built-in Hershey fonts (no font files, nothing downloaded, no GUI backend).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from kosti.vision.evaluate import EvalReport, ImageRecord
from kosti.vision.reader import load_image

ROW_LABELS = ["1", "2", "3", "4", "5", "6", "extra"]
COL_LABELS = ["1", "2", "3", "4", "5", "6", "?", "missed"]
#: BGR colours: label boxes, right reads, wrong reads, uncertain reads, extra boxes.
TRUE_COLOR, RIGHT_COLOR, WRONG_COLOR, UNSURE_COLOR, EXTRA_COLOR = (
    (0, 200, 0), (255, 160, 0), (0, 0, 255), (0, 215, 255), (255, 0, 255),
)
FONT = cv2.FONT_HERSHEY_SIMPLEX
#: Dice-sheet layout: tile side (px; the crop is scaled to it), caption strip height (px), tiles per row and
#: per sheet, and how much wider than the die's box the crop is (so that its neighbours and shadow show).
TILE, CAPTION, SHEET_COLS, SHEET_TILES, TILE_CONTEXT = 128, 34, 8, 64, 1.6
#: Kinds of die error on the sheets, in sheet order, with their caption colours (BGR).
DIE_ERRORS = {"wrong": WRONG_COLOR, "uncertain": (0, 140, 200), "missed": TRUE_COLOR, "extra": EXTRA_COLOR}
#: Columns of ``dice/dice.csv``: the sheet file and tile index (row-major) of each die, its kind, photo, box in
#: photo pixels, labelled face (0: none, an extra box), the reader's face (0: uncertain or missed), its best
#: guess, the probability of that face, the detector's score and the box's shorter side (px).
DIE_CSV_COLUMNS = ("sheet", "tile", "kind", "image", "x1", "y1", "x2", "y2", "true", "read", "guess", "face_prob",
                   "det_conf", "side_px")


def draw_confusion(cm: np.ndarray, title: str = "dice reader: true face (rows) vs read face") -> np.ndarray:
    """Render a ``(7, 8)`` :attr:`EvalReport.confusion_full` as a BGR image.

    Cells are shaded by their share of the row (darker = more) and show the count.
    """
    rows, cols = cm.shape
    cell, left, top = 70, 90, 110
    img = np.full((top + rows * cell + 20, left + cols * cell + 20, 3), 255, np.uint8)
    cv2.putText(img, title, (10, 30), FONT, 0.6, (0, 0, 0), 1, cv2.LINE_AA)
    cv2.putText(img, "read ->", (left, 60), FONT, 0.5, (80, 80, 80), 1, cv2.LINE_AA)
    totals = cm.sum(1, keepdims=True).clip(min=1)
    share = cm / totals
    for j, lab in enumerate(COL_LABELS[:cols]):
        cv2.putText(img, lab, (left + j * cell + 8, top - 12), FONT, 0.55, (0, 0, 0), 1, cv2.LINE_AA)
    for i in range(rows):
        cv2.putText(img, ROW_LABELS[i], (10, top + i * cell + cell // 2 + 6), FONT, 0.55, (0, 0, 0), 1, cv2.LINE_AA)
        for j in range(cols):
            x0, y0 = left + j * cell, top + i * cell
            shade = int(255 - 200 * share[i, j])
            diag = i == j and i < 6
            color = (255, shade, shade) if diag else (shade, shade, 255)
            cv2.rectangle(img, (x0, y0), (x0 + cell, y0 + cell), color, -1)
            cv2.rectangle(img, (x0, y0), (x0 + cell, y0 + cell), (200, 200, 200), 1)
            if cm[i, j]:
                txt = str(int(cm[i, j]))
                ink = (255, 255, 255) if share[i, j] > 0.6 else (0, 0, 0)
                cv2.putText(img, txt, (x0 + 8, y0 + cell // 2 + 6), FONT, 0.55, ink, 1, cv2.LINE_AA)
    return img


def draw_record(image: np.ndarray, rec: ImageRecord, max_side: int = 1280) -> np.ndarray:
    """Draw labels and reads of one image: label boxes green with ``tN``; matched reads blue (right),
    red (wrong) or yellow (uncertain ``?``) with the read value; extra boxes magenta; missed labels
    keep only their green box. Returns a BGR image scaled so its longer side ≤ ``max_side``, with a
    28 px summary banner (missed / extra / wrong counts) below it."""
    s = min(1.0, max_side / max(image.shape[:2]))
    img = cv2.resize(image, None, fx=s, fy=s, interpolation=cv2.INTER_AREA) if s < 1 else image.copy()
    th = max(1, round(2 * s + 0.5))

    def box(b: np.ndarray, color: tuple[int, int, int], text: str, below: bool = False) -> None:
        x1, y1, x2, y2 = (int(round(v * s)) for v in b)
        cv2.rectangle(img, (x1, y1), (x2, y2), color, th)
        y = y2 + 16 if below else max(y1 - 4, 12)
        cv2.putText(img, text, (x1, y), FONT, 0.5, color, 1 + (th > 1), cv2.LINE_AA)

    for k in range(len(rec.true_values)):
        box(rec.true_xyxy[k], TRUE_COLOR, f"t{int(rec.true_values[k])}", below=True)
    matched = dict((j, k) for k, j in rec.pairs)
    for j in range(len(rec.pred)):
        v = int(rec.pred.value[j])
        label = f"{v if v else '?'} {rec.pred.value_confidence[j]:.2f}"
        if j not in matched:
            color = EXTRA_COLOR
        elif v == 0:
            color = UNSURE_COLOR
        elif v == int(rec.true_values[matched[j]]):
            color = RIGHT_COLOR
        else:
            color = WRONG_COLOR
        box(rec.pred.xyxy[j], color, label)
    summary = f"{rec.image.name}: missed {len(rec.missed)}  extra {len(rec.extra)}  wrong {len(rec.wrong)}"
    banner = np.zeros((28, img.shape[1], 3), np.uint8)
    cv2.putText(banner, summary, (8, 19), FONT, 0.55, (255, 255, 255), 1, cv2.LINE_AA)
    return np.vstack([img, banner])


def write_plots(report: EvalReport, out_dir: str | Path, max_errors: int = 24) -> list[Path]:
    """Write ``confusion_matrix.png``, up to ``max_errors`` ``errors/NNN_<image>.png`` (images not
    read exactly, most mistakes first) and the dice sheets of :func:`write_die_sheets` into ``out_dir``
    (created). Returns the written paths.

    Raises:
        OSError: ``out_dir`` cannot be written.
    """
    out = Path(out_dir)
    (out / "errors").mkdir(parents=True, exist_ok=True)
    written = []
    p = out / "confusion_matrix.png"
    if not cv2.imwrite(str(p), draw_confusion(report.confusion_full)):
        raise OSError(f"cannot write {p}")
    written.append(p)
    bad = [r for r in report.records if not r.exact]
    bad.sort(key=lambda r: -(len(r.missed) + len(r.extra) + len(r.wrong)))
    for i, rec in enumerate(bad[:max_errors]):
        q = out / "errors" / f"{i:03d}_{rec.image.stem}.png"
        if not cv2.imwrite(str(q), draw_record(load_image(rec.image), rec)):
            raise OSError(f"cannot write {q}")
        written.append(q)
    return written + write_die_sheets(report, out)


def die_errors(rec: ImageRecord) -> list[dict[str, Any]]:
    """Every die of ``rec`` the reader did not read right, as rows of :data:`DIE_CSV_COLUMNS` (without ``sheet``
    and ``tile``): matched dice read as another face (``wrong``) or left uncertain (``uncertain``), labelled dice
    no read matched (``missed``: the label's box) and reads that matched no label (``extra``).

    Rows come in the order of :data:`DIE_ERRORS`; boxes are ``float`` photo pixels; a value not known for that
    kind is 0 (faces) or NaN (probabilities, scores).
    """
    pred, rows = rec.pred, []
    guess = pred.data.get("guess", pred.value)

    def row(kind: str, box: np.ndarray, true: int, j: int | None) -> dict[str, Any]:
        x1, y1, x2, y2 = (round(float(v), 1) for v in box)
        return {"kind": kind, "image": str(rec.image), "x1": x1, "y1": y1, "x2": x2, "y2": y2, "true": true,
                "read": int(pred.value[j]) if j is not None else 0,
                "guess": int(guess[j]) if j is not None else 0,
                "face_prob": round(float(pred.value_confidence[j]), 3) if j is not None else float("nan"),
                "det_conf": round(float(pred.confidence[j]), 3) if j is not None else float("nan"),
                "side_px": round(min(x2 - x1, y2 - y1), 1)}

    for k, j in rec.wrong:
        kind = "uncertain" if pred.value[j] == 0 else "wrong"
        rows.append(row(kind, pred.xyxy[j], int(rec.true_values[k]), j))
    rows += [row("missed", rec.true_xyxy[k], int(rec.true_values[k]), None) for k in rec.missed]
    rows += [row("extra", pred.xyxy[j], 0, j) for j in rec.extra]
    order = list(DIE_ERRORS)
    return sorted(rows, key=lambda r: order.index(r["kind"]))


def die_caption(row: dict[str, Any]) -> tuple[str, str]:
    """Two caption lines for a :func:`die_errors` row: what it is against what was read (``"6 read 4 0.82"``,
    ``"6 ? (4) 0.55"``, ``"6 missed"``, ``"extra 3 0.91"``) and the box's side and detector score."""
    kind, p = row["kind"], row["face_prob"]
    first = {"wrong": f"{row['true']} read {row['read']} {p:.2f}",
             "uncertain": f"{row['true']} ? ({row['guess'] or '-'}) {p:.2f}",
             "missed": f"{row['true']} missed",
             "extra": f"extra {row['read'] or '?'} {p:.2f}"}[kind]
    score = row["det_conf"]
    second = f"{row['side_px']:.0f}px" + ("" if score != score else f" det {score:.2f}")  # NaN: no read
    return first, second


#: Example rows of :func:`die_errors`, one per kind, from which the sheets' legend writes its captions (so the legend
#: shows exactly what :func:`die_caption` writes), with what each caption says.
_LEGEND_EXAMPLES: tuple[tuple[dict[str, Any], str], ...] = (
    ({"kind": "wrong", "true": 5, "read": 4, "guess": 4, "face_prob": 0.85, "det_conf": 0.8, "side_px": 41.0},
     "a die labelled 5 read as 4; 0.85 = the probability the reader gave that face"),
    ({"kind": "uncertain", "true": 5, "read": 0, "guess": 5, "face_prob": 0.52, "det_conf": 0.8, "side_px": 41.0},
     "a 5 left uncertain, so kosti would ask the table; (5) = its best guess, 0.52 = that face's probability"),
    ({"kind": "missed", "true": 6, "read": 0, "guess": 0, "face_prob": float("nan"), "det_conf": float("nan"),
      "side_px": 41.0}, "a labelled 6 the detector found no box for (the label's box is drawn)"),
    ({"kind": "extra", "true": 0, "read": 3, "guess": 3, "face_prob": 0.91, "det_conf": 0.8, "side_px": 41.0},
     "a box on no labelled die, read as 3 with probability 0.91"),
)
#: Height (px) of one legend line, and the legend's title.
LEGEND_LINE = 17
LEGEND_TITLE = "How to read a tile: the first line is the label against the read, the second the box (dice.csv has both):"


def sheet_legend() -> list[tuple[str, tuple[int, int, int]]]:
    """The legend drawn above every dice sheet, as ``(text, BGR colour)`` lines: the title, one line per kind of
    :data:`DIE_ERRORS` in its caption colour — the caption :func:`die_caption` writes for an example die, ``=``, what
    it means (``"5 ? (5) 0.52  = a 5 left uncertain (the table is asked): best guess (5), …"``) — and a grey line
    for the second caption line (``"41px det 0.80"``: the box's shorter side in photo pixels, the detector's
    score)."""
    lines: list[tuple[str, tuple[int, int, int]]] = [(LEGEND_TITLE, (0, 0, 0))]
    for row, meaning in _LEGEND_EXAMPLES:
        lines.append((f"{die_caption(row)[0]}  = {meaning}", DIE_ERRORS[row["kind"]]))
    second = die_caption(_LEGEND_EXAMPLES[0][0])[1]
    lines.append((f"{second}  = the box's shorter side in photo pixels; det = the detector's score for the box "
                  "(none for a missed die)", (60, 60, 60)))
    return lines


def draw_legend(width: int) -> np.ndarray:
    """:func:`sheet_legend` drawn on white: a ``(LEGEND_LINE * lines + 8, width, 3)`` uint8 BGR band, in the
    captions' font and size, with a grey rule below it."""
    lines = sheet_legend()
    band = np.full((LEGEND_LINE * len(lines) + 8, width, 3), 255, np.uint8)
    for i, (text, color) in enumerate(lines):
        cv2.putText(band, text, (4, LEGEND_LINE * (i + 1)), FONT, 0.42, color, 1, cv2.LINE_AA)
    band[-2:] = 160
    return band


def die_tile(image: np.ndarray, xyxy: np.ndarray, lines: tuple[str, str], color: tuple[int, int, int],
             context: float = TILE_CONTEXT) -> np.ndarray:
    """A ``(TILE + CAPTION, TILE, 3)`` uint8 BGR tile: the square of side ``context`` × the longer side of box
    ``xyxy`` (photo px) around its centre, grey where it leaves the photo, scaled to ``TILE`` px, the box drawn
    in ``color``, and ``lines`` written below it."""
    x1, y1, x2, y2 = (float(v) for v in xyxy)
    side = max(int(round(max(x2 - x1, y2 - y1, 2.0) * context)), 2)
    x0, y0 = int(round((x1 + x2 - side) / 2)), int(round((y1 + y2 - side) / 2))
    h, w = image.shape[:2]
    crop = np.full((side, side, 3), 128, np.uint8)  # grey where the square leaves the photo
    a, b, c, d = max(x0, 0), max(y0, 0), min(x0 + side, w), min(y0 + side, h)
    if c > a and d > b:
        crop[b - y0:d - y0, a - x0:c - x0] = image[b:d, a:c]
    s = TILE / side
    scaled = cv2.resize(crop, (TILE, TILE), interpolation=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR)
    p1 = (int(round((x1 - x0) * s)), int(round((y1 - y0) * s)))
    p2 = (int(round((x2 - x0) * s)), int(round((y2 - y0) * s)))
    cv2.rectangle(scaled, p1, p2, color, 1)
    tile = np.full((TILE + CAPTION, TILE, 3), 255, np.uint8)
    tile[:TILE] = scaled
    for i, text in enumerate(lines):
        cv2.putText(tile, text, (3, TILE + 14 + 16 * i), FONT, 0.42, color if i == 0 else (60, 60, 60), 1,
                    cv2.LINE_AA)
    return tile


def draw_sheet(tiles: list[np.ndarray], cols: int = SHEET_COLS, legend: bool = True) -> np.ndarray:
    """Tiles of :func:`die_tile` (each ``(h, w, 3)``) in rows of ``cols``, 2 px apart, the last row padded white,
    below the :func:`draw_legend` band (``legend``): a ``(legend height + ceil(len(tiles) / cols) * (h + 2),
    cols * (w + 2), 3)`` uint8 BGR image."""
    h, w = tiles[0].shape[:2]
    rows = -(-len(tiles) // cols)
    sheet = np.full((rows * (h + 2), cols * (w + 2), 3), 255, np.uint8)
    for i, t in enumerate(tiles):
        r, c = divmod(i, cols)
        sheet[r * (h + 2): r * (h + 2) + h, c * (w + 2): c * (w + 2) + w] = t
    return np.vstack([draw_legend(sheet.shape[1]), sheet]) if legend else sheet


def write_die_sheets(report: EvalReport, out_dir: str | Path, max_sheets: int = 10) -> list[Path]:
    """Write ``out_dir/dice/sheet_NN.png`` (:data:`SHEET_TILES` dice each, in :data:`DIE_ERRORS` order: wrong,
    uncertain, missed, extra, under a legend of the captions, :func:`sheet_legend`; at most ``max_sheets``) and ``out_dir/dice/dice.csv`` (every such die, also those
    past the last sheet, whose ``sheet`` is then empty; unknown probabilities and scores are empty cells). Returns
    the written paths (CSV last); no sheet when every die was read right.

    Raises:
        OSError: a file cannot be written.
        kosti.vision.reader.ImageReadError: a photo of the report cannot be read any more.
    """
    out = Path(out_dir) / "dice"
    out.mkdir(parents=True, exist_ok=True)
    rows = [r for rec in report.records for r in die_errors(rec)]
    order = list(DIE_ERRORS)
    rows.sort(key=lambda r: order.index(r["kind"]))  # stable: photo order within a kind
    shown = rows[: max_sheets * SHEET_TILES]
    by_photo: dict[str, list[int]] = {}
    for i, r in enumerate(shown):
        by_photo.setdefault(r["image"], []).append(i)
        r["sheet"], r["tile"] = f"sheet_{i // SHEET_TILES:02d}.png", i % SHEET_TILES
    tiles: list[np.ndarray] = [np.empty(0)] * len(shown)
    for image, idxs in by_photo.items():  # each photo read once, one in memory at a time
        photo = load_image(image)
        for i in idxs:
            r = shown[i]
            box = np.array([r["x1"], r["y1"], r["x2"], r["y2"]], np.float32)
            tiles[i] = die_tile(photo, box, die_caption(r), DIE_ERRORS[r["kind"]])
    written = []
    for n in range(0, len(tiles), SHEET_TILES):
        p = out / f"sheet_{n // SHEET_TILES:02d}.png"
        if not cv2.imwrite(str(p), draw_sheet(tiles[n: n + SHEET_TILES])):
            raise OSError(f"cannot write {p}")
        written.append(p)
    p = out / "dice.csv"
    with open(p, "w", newline="") as f:
        w = csv.DictWriter(f, DIE_CSV_COLUMNS, restval="")
        w.writeheader()
        w.writerows({k: "" if isinstance(v, float) and v != v else v for k, v in r.items()} for r in rows)  # NaN: ""
    written.append(p)
    return written
