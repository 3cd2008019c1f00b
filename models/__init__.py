"""Shipped model weights and their model card (``models/README.md``).

Files here are loaded by default by :mod:`kosti.vision`:

* ``dice_det.onnx`` — YOLO11n detector at 640 px, one class ``die``; Ultralytics ONNX export (metadata holds
  ``imgsz``, ``stride``, ``names``), raw output ``(1, 5, N)`` = ``cx, cy, w, h, score`` in letterbox pixels.
* ``dice_cls.onnx`` — YOLO11n-cls face classifier (64 px) on :func:`kosti.vision.crops.square_crop` crops,
  classes ``1 2 3 4 5 6 x`` (``x`` = unreadable: cocked, blurred, hidden or not a die).
* Both ONNX files are INT8 since v1.1 (:mod:`kosti.datasets.quantize`: static QDQ, 7-bit per-channel
  weights, calibrated on training photos; the detector's box decoding and the classifier's last layer
  float32), quantised from the ``.pt`` files' weights: 1.4× faster on a CPU, 59 % of the bytes.
* ``dice_det_ncnn_model/`` / ``dice_cls_ncnn_model/`` — the same models as NCNN exports (float16 weights) for
  the ``ncnn`` backend on the Raspberry Pi.
* ``dice_det.pt`` / ``dice_cls.pt`` — the same models for Ultralytics (fine-tuning, NCNN export).
* ``reader.json`` — ``{"temperature": T, "views": "upright"}``: the classifier's softmax temperature and test-time
  views (read by ``DiceReader``).
"""

from __future__ import annotations

from pathlib import Path

#: Folder holding the shipped weights (inside the installed package or the source checkout).
MODELS_DIR = Path(__file__).resolve().parent
DETECTOR_ONNX = MODELS_DIR / "dice_det.onnx"
CLASSIFIER_ONNX = MODELS_DIR / "dice_cls.onnx"
#: The float weights the ONNX files were quantised from (Ultralytics checkpoints, float16, optimizer stripped).
DETECTOR_PT = MODELS_DIR / "dice_det.pt"
CLASSIFIER_PT = MODELS_DIR / "dice_cls.pt"
#: The same models as NCNN export folders (``kosti export --format ncnn models/dice_*.pt`` writes them), read
#: by :mod:`kosti.vision.ncnn_backend` on the ``ncnn`` package alone (the Raspberry Pi's runtime).
DETECTOR_NCNN = MODELS_DIR / "dice_det_ncnn_model"
CLASSIFIER_NCNN = MODELS_DIR / "dice_cls_ncnn_model"

#: The shipped reader's operating point, chosen on the selection splits (rune55-dedup val + epanemu-dice
#: val pooled, never on the byler-d6 test or skovy-webcam sets that the model card reports; since 2026-12-03
#: without the photos whose labels are known to be wrong, ``datasets/label_errors/``) by
#: ``benchmarks/select_operating_point.py``: the best image_exact among points with ≤ 1 % wrong reads
#: (v1.3 — v1.2's ``det_v8`` detector and the ``cls_v13`` classifier read upright, both INT8: conf 0.5, value_conf 0.7,
#: second look at boxes above 0.05 confirmed at face probability 0.98, a face 1 only above detector score 0.1,
#: T 0.973 → selection image_exact 0.714, wrong 0.36 %, uncertain 5.2 % on 301 photos, the audited labels
#: corrected (v1.2's point on the same photos: 0.694, wrong 1.1 %); v1.2 — the ``det_v8`` detector and v1.1's
#: classifier (v1.0's weights), both INT8: conf 0.5, value_conf 0.7, second look at
#: boxes above 0.05 confirmed at face probability 0.95, a face 1 only above detector score 0.1, T 0.843 →
#: selection image_exact 0.700, wrong 0.75 %, uncertain 6.2 % on 297 photos; v1.1: conf 0.45, 0.05 @ 0.95,
#: a lone 1 above 0.2, T 0.867, chosen with the 5 mislabelled photos in → 0.677 on the same 297;
#: ``value_conf`` may not go below v1.0's 0.7, see ``benchmarks/select_operating_point.py``
#: ``MIN_VALUE_CONF``; v1.0, float: conf 0.5, value_conf 0.7, 0.05 @ 0.95 → 0.649 on 302, wrong 0.96 %,
#: uncertain 5.4 %; v0.3 was conf 0.5, value_conf 0.4, 0.05 @ 0.98 on rune55 val alone), with the softmax
#: temperature fitted there too (``reader.json``). See ``models/README.md``.
#: ``DEFAULT_CONF``: detector confidence threshold (a box scoring above it is a die).
DEFAULT_CONF = 0.5
#: ``DEFAULT_IOU``: NMS IoU threshold. Dice are cubes seen from above: two dice's boxes overlap little
#: even when they touch, so a box overlapping a better one by ≥ 0.45 is the same die found twice
#: (Ultralytics' general-purpose default is 0.7; 0.45 removed 18 of 31 false boxes on byler-d6 test
#: and 50 of 172 on rune55 val with the v0.1 detector, for 1 lost die).
DEFAULT_IOU = 0.45
#: ``DEFAULT_VALUE_CONF``: minimum face probability; below it a die is reported uncertain (value 0).
DEFAULT_VALUE_CONF = 0.7
#: ``DEFAULT_VERIFY_CONF`` and ``DEFAULT_VERIFY_PROB``: the classifier's second look. A box the detector
#: scores at or below ``DEFAULT_CONF`` but above ``DEFAULT_VERIFY_CONF`` is still a die when the face
#: classifier reads a face on it with (calibrated) probability ``≥ DEFAULT_VERIFY_PROB`` — a two-stage
#: cascade: the detector proposes, the classifier confirms. Chosen on the selection splits with the rest of the
#: operating point; see ``models/README.md`` for what it changes on each set. ``DEFAULT_VERIFY_CONF =
#: DEFAULT_CONF`` would turn it off.
DEFAULT_VERIFY_CONF = 0.05
DEFAULT_VERIFY_PROB = 0.98
#: ``DEFAULT_VERIFY_ONE_CONF``: the second look confirms a weak box read as a **1** only when the detector
#: scored it above this — a number token, coin or button reads as a lone pip as surely as a real 1 does
#: (:class:`kosti.vision.reader.DiceReader`, ``verify_one_conf``). Chosen on the selection splits with the
#: rest of the operating point (new in v1.1 at 0.2; 0.1 with v1.2's detector; ``≤ DEFAULT_VERIFY_CONF`` would turn
#: the rule off).
DEFAULT_VERIFY_ONE_CONF = 0.1
#: ``DEFAULT_NOT_DIE_PROB``: a box the face classifier reads as ``x`` (not a readable die) with calibrated probability
#: at least this is not a die, whatever the detector scored it (:class:`kosti.vision.reader.DiceReader`,
#: ``not_die_prob``; 1 = off). New on 2026-12-03: a noisy webcam frame's dark corner is boxed at 0.5–0.78 and read as
#: ``x`` at ≥ 0.99 (``benchmarks/robustness.py``); chosen on the selection splits (model card, "Robustness").
DEFAULT_NOT_DIE_PROB = 0.99
#: ``DEFAULT_DIM_GAIN``: a frame that takes a gain above this to bring its bright end (99.9th percentile of the
#: brightest channel) to 230 is read brightened by that gain, at most 2.5 (:mod:`kosti.vision.exposure`;
#: :class:`kosti.vision.reader.DiceReader`, ``dim_gain``; 0 = off). New on 2026-12-03: no photo of the four measured
#: splits as shipped needs more than 1.36, so they read as before; at ×0.6 brightness every photo needs more than 1.5
#: (model card, "Robustness").
DEFAULT_DIM_GAIN = 1.5
#: Operating points of earlier shipped readers, as ``kosti config init`` (and so ``deploy/install.sh``) wrote
#: them into ``kosti.toml`` as plain values: v0.3's, v1.0's, v1.1's and v1.2's (a file holding v1.1's or v1.2's also
#: holds its ``verify_one_conf``, which the earlier two did not write). A configuration that holds exactly one of them holds an
#: old default, not a choice, and reads at today's operating point (:class:`kosti.config.ReaderSettings`).
EARLIER_OPERATING_POINTS: tuple[dict[str, float], ...] = (
    {"conf": 0.5, "value_conf": 0.4, "verify_prob": 0.98},  # v0.3
    {"conf": 0.5, "value_conf": 0.7, "verify_prob": 0.95},  # v1.0
    {"conf": 0.45, "value_conf": 0.7, "verify_prob": 0.95, "verify_one_conf": 0.2},  # v1.1
    {"conf": 0.5, "value_conf": 0.7, "verify_prob": 0.95, "verify_one_conf": 0.1},  # v1.2
)
#: ``DEFAULT_NESTED_FRAC``: a die box covered this much (share of its own area) by a stronger die box is
#: the same die again (a face or side face boxed inside the whole die in oblique views) and is dropped.
#: Measured with v0.3 on the validation splits, see ``models/README.md``.
DEFAULT_NESTED_FRAC = 0.7
#: ``DEFAULT_WEAK_NESTED_FRAC``: a *weak* die box (detector score at or below ``conf``, kept by the second
#: look) covered this much by a stronger die box is the same die again and is dropped — in oblique views and
#: tight groups the detector also proposes a die's side face, or a box shifted onto it, at a low score,
#: and the second look reads a face there as surely as on the die itself. Measured on the selection splits
#: (rune55-dedup val + epanemu-dice val, v1.1 at its operating point): 0.5 drops 2 such boxes, 0.4 drops 3,
#: 0.3 drops 4, none a labelled die; 0.2 starts dropping real dice (recall 0.916 → 0.911 on rune55 val).
#: 0.4 keeps a margin from that edge. Found on a byler-d6 test photo, which it fixes (``models/README.md``, "v1.1").
DEFAULT_WEAK_NESTED_FRAC = 0.4
#: ``DEFAULT_ZOOM_IMGSZ`` and ``DEFAULT_ZOOM_BELOW``: the reader's zoom for small dice. When the dice it
#: found are small — median side under ``zoom_below`` pixels of the 640 px detector input (20: dice under 40 px
#: on a 1280×720 frame; for a frame larger than 800 px the lower quartile, ``ZOOM_LARGE_FRAME_QUANTILE``) — or it
#: found none but weak candidates, the frame is read again with the detector at
#: ``DEFAULT_ZOOM_IMGSZ`` px (the network takes any stride-multiple size): the result is that read's dice plus
#: the first read's dice it missed (:meth:`kosti.vision.reader.DiceReader.merge_zoomed`). Chosen on the
#: selection splits by ``benchmarks/select_zoom.py`` for reader v1.2 (2026-12-03): image_exact 0.700 → 0.707,
#: recall 0.901 → 0.908, precision 0.923 → 0.924 (18 of 297 photos read twice); 800 px rather than 960 (960 px:
#: at most 0.704, at precision 0.913–0.918): det_v8 learnt at 800 px. byler-d6 test and skovy-webcam do not
#: change (no photo read twice). Until 2026-12-03 (v1.0–v1.2 as first shipped) the zoom was off (0 and 960;
#: its zoomed read then replaced the first, and on skovy-webcam v1.0's 960 px read boxed a wooden floor); see
#: ``models/README.md``, "The zoom on by default".
DEFAULT_ZOOM_IMGSZ = 800
DEFAULT_ZOOM_BELOW = 20.0
#: ``DEFAULT_ZOOM_MAX`` and ``ZOOM_DIE_SIDE``: how large the zoomed read may be (2026-12-04). A frame larger than
#: ``DEFAULT_ZOOM_IMGSZ`` whose dice are small at the 640 px input (a phone's or a 1080p webcam's picture of a whole
#: table) is read at the input side that brings its dice's median side to ``ZOOM_DIE_SIDE`` px, at most its own
#: longer side and ``DEFAULT_ZOOM_MAX`` (:meth:`kosti.vision.reader.DiceReader.zoom_side`); a frame of 800 px or
#: less zooms to 800 as before, so the shared sets' 640 px photos read as before. Measured by
#: ``benchmarks/far_dice.py`` (models/README.md, "Far dice in a large frame").
DEFAULT_ZOOM_MAX = 1280
ZOOM_DIE_SIDE = 32.0
#: Which of a large frame's dice decide whether it is zoomed: a frame larger than ``DEFAULT_ZOOM_IMGSZ`` is read
#: again when the lower quartile of its dice' sides (``np.quantile``, interpolated; not their median, as for a
#: photo of 800 px or less) is under
#: ``zoom_below`` at the 640 px input — seen from a seat, a table's far dice are the small ones, and a large frame
#: has the pixels to read them. ``benchmarks/far_dice.py``, 8 frames of 2×2 photos: epanemu-dice val recall 0.584
#: → 0.764 (precision 0.897 → 0.907), byler-d6 test 0.973 → 1.000, rune55-dedup val unchanged (models/README.md).
ZOOM_LARGE_FRAME_QUANTILE = 0.25
#: Zoomed input sides are rounded up to a multiple of this (px): YOLO's largest stride, and few sizes to keep.
ZOOM_STEP = 32
#: The zoom as ``kosti config init`` wrote it into ``kosti.toml`` from v1.0 to v1.2 (off). A file holding exactly
#: this pair holds an old default, not a choice, and zooms as today (:class:`kosti.config.ReaderSettings`).
EARLIER_ZOOM: dict[str, float] = {"zoom_below": 0.0, "zoom_imgsz": 960}
