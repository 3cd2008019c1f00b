"""Pictures for ``kosti eval --plots DIR``: a confusion matrix and the images the reader got wrong.

Drawn with OpenCV's built-in Hershey fonts (no font files, nothing downloaded, no GUI backend).
"""

from __future__ import annotations

from pathlib import Path

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
    """Write ``confusion_matrix.png`` and up to ``max_errors`` ``errors/NNN_<image>.png`` (images not
    read exactly, most mistakes first) into ``out_dir`` (created). Returns the written paths.

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
    return written
