"""The live view's overlay and its JPEG: one overlay built from small annotators, one encoder.

Each annotator draws one thing in place on a BGR image (``(H, W, 3)`` uint8) — :func:`draw_zones` (the roll and
set-aside areas), :func:`draw_dice` (boxes with face and confidence), :func:`draw_state` (the settle state with
its motion bar), :func:`draw_message` (a line of text across the top). :func:`annotate` composes them on a copy
of a frame; :func:`encode_jpeg` is the one JPEG encoder of the live view (the runner's
:meth:`~kosti.vision.runner.LivePipeline.live_jpeg`, the dashboard's MJPEG stream and stored throw photos).

Text is ASCII: OpenCV's Hershey fonts have no Cyrillic; the dashboard shows the Russian labels in HTML.
"""

from __future__ import annotations

from collections.abc import Iterable

import cv2
import numpy as np

from kosti.vision.detections import Detections
from kosti.vision.settle import SettleState, SettleUpdate
from kosti.vision.throws import Die
from kosti.vision.zones import Zones

#: Banner colour (BGR) of each settle state.
_STATE_COLORS = {"moving": (0, 140, 255), "settling": (0, 215, 255), "settled": (60, 200, 60)}

#: One die to draw: ``((x1, y1, x2, y2) px, value 1–6 or 0 = uncertain, confidence 0–1)``.
DieMark = tuple[tuple[float, float, float, float], int, float]


def _scale(image: np.ndarray) -> tuple[float, int]:
    """Font scale and line thickness for ``image`` (sized for a 720-px short side)."""
    h, w = image.shape[:2]
    scale = max(0.5, min(w, h) / 720.0)
    return scale, max(1, round(2 * scale))


def draw_zones(out: np.ndarray, zones: Zones) -> None:
    """Outline the roll area (green) and the set-aside area (blue), in place."""
    h, w = out.shape[:2]
    _, thick = _scale(out)
    polys = zones.pixel_polygons(w, h)
    cv2.polylines(out, [polys["roll_area"]], True, (80, 200, 80), thick, cv2.LINE_AA)
    if "set_aside" in polys:
        cv2.polylines(out, [polys["set_aside"]], True, (220, 160, 40), thick, cv2.LINE_AA)


def die_marks(detections: Detections | Iterable[Die] | None) -> list[DieMark]:
    """The dice to draw from :class:`Detections` (face confidence) or voted :class:`Die` s."""
    if detections is None:
        return []
    if isinstance(detections, Detections):
        return [((float(b[0]), float(b[1]), float(b[2]), float(b[3])), int(v), float(c))
                for b, v, c in zip(detections.xyxy, detections.value, detections.value_confidence)]
    return [(d.box, int(d.value), float(d.confidence)) for d in detections]


def draw_dice(out: np.ndarray, marks: Iterable[DieMark]) -> None:
    """Box each die with ``"value confidence"`` (green) or ``"?"`` (orange, value 0 = uncertain), in place."""
    scale, thick = _scale(out)
    for (x1, y1, x2, y2), value, conf in marks:
        color = (60, 220, 60) if value else (0, 140, 255)
        p1, p2 = (int(round(x1)), int(round(y1))), (int(round(x2)), int(round(y2)))
        cv2.rectangle(out, p1, p2, color, thick, cv2.LINE_AA)
        label = f"{value} {conf:.2f}" if value else "?"
        (tw, th), _ = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, 0.6 * scale, thick)
        ty = max(th + 4, p1[1] - 4)
        cv2.rectangle(out, (p1[0], ty - th - 4), (p1[0] + tw + 4, ty + 2), color, -1)
        cv2.putText(out, label, (p1[0] + 2, ty), cv2.FONT_HERSHEY_SIMPLEX, 0.6 * scale, (0, 0, 0), thick, cv2.LINE_AA)


def draw_state(out: np.ndarray, state: SettleUpdate | SettleState | str, status: str | None = None) -> None:
    """The settle state (``MOVING`` / ``SETTLING`` / ``SETTLED``, plus ``status``) in the top-left corner; an
    update also draws its motion bar (full at 5 % of the frame moving). In place."""
    scale, thick = _scale(out)
    name = state.state.value if isinstance(state, SettleUpdate) else SettleState(state).value
    text = name.upper() + (f"  {status}" if status else "")
    color = _STATE_COLORS.get(name, (255, 255, 255))
    cv2.rectangle(out, (0, 0), (int(260 * scale), int(34 * scale)), (0, 0, 0), -1)
    cv2.putText(out, text, (int(8 * scale), int(24 * scale)), cv2.FONT_HERSHEY_SIMPLEX, 0.7 * scale, color, thick,
                cv2.LINE_AA)
    if isinstance(state, SettleUpdate):
        bar = int(min(1.0, state.motion / 0.05) * 250 * scale)
        cv2.rectangle(out, (int(5 * scale), int(30 * scale)), (int(5 * scale) + bar, int(33 * scale)), color, -1)


def draw_message(out: np.ndarray, text: str) -> None:
    """A white line of ASCII ``text`` on a black band across the top (no reader, no camera …), in place."""
    w = out.shape[1]
    cv2.rectangle(out, (0, 0), (w, 30), (0, 0, 0), -1)
    cv2.putText(out, text, (8, 21), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 255, 255), 1, cv2.LINE_AA)


def annotate(
    image: np.ndarray,
    detections: Detections | list[Die] | None,
    state: SettleUpdate | SettleState | str | None,
    zones: Zones | None = None,
    status: str | None = None,
    message: str | None = None,
) -> np.ndarray:
    """Draw the live-view overlay on a copy of ``image``: zones, dice, settle state, then ``message``.

    Args:
        image: ``(H, W, 3)`` uint8 BGR frame (not modified).
        detections: dice to draw (:class:`Detections` or :class:`Die` list); value 0 = uncertain (orange "?").
        state: settle state (an update also draws its motion bar); None draws no state.
        zones: draws the roll area (green) and set-aside area (blue) outlines.
        status: throw status text (``ok`` / ``uncertain``) added to the state banner.
        message: a line across the top instead of the state (e.g. ``"no dice reader"``).

    Returns:
        A new ``(H, W, 3)`` uint8 BGR image.
    """
    out = image.copy()
    if zones is not None:
        draw_zones(out, zones)
    draw_dice(out, die_marks(detections))
    if state is not None:
        draw_state(out, state, status)
    if message:
        draw_message(out, message)
    return out


def placeholder_frame(text: str, size: tuple[int, int] = (640, 360)) -> np.ndarray:
    """A dark ``size`` = ``(width, height)`` frame saying ``text`` (shown when there is no camera frame)."""
    w, h = size
    img = np.full((h, w, 3), 32, np.uint8)
    cv2.putText(img, text, (20, h // 2), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (200, 200, 200), 2, cv2.LINE_AA)
    return img


def encode_jpeg(image: np.ndarray, quality: int = 80, width: int | None = None) -> bytes:
    """JPEG bytes of ``image`` (``(H, W, 3)`` uint8 BGR) at ``quality`` 1–100, scaled down (INTER_AREA) to
    ``width`` pixels wide when it is wider. Raises RuntimeError when OpenCV cannot encode it."""
    if width and image.shape[1] > width:
        h = round(image.shape[0] * width / image.shape[1])
        image = cv2.resize(image, (width, h), interpolation=cv2.INTER_AREA)
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return buf.tobytes()
