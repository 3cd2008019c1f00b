"""Turn labelled YOLO dice datasets into the reader's two training sets.

* **Detector set** (one class ``die``): images are *linked*, never copied (the shared photos stay in
  ``../shared/datasets``); labels are rewritten with class 0.
* **Classifier set** (ImageFolder ``{train,val}/{1..6,x}/*.png``): 64×64 crops cut with
  :func:`kosti.vision.crops.square_crop` — the exact crop the runtime reader makes — with box jitter
  (±10 % of the box, like a detector's box error) and a random rotation, several per die. Class ``x``
  (unreadable / not a die) comes from background patches that overlap no die and from crops shifted
  half a die off centre (the edge of a die, as a bad box would give).
* **Detector crops** (:func:`prepare_detector_crops`, same layout): crops cut around a detector's own boxes,
  the labelled dice it finds in their face class and its weak boxes on no die as ``x`` — the boxes and the
  clutter the classifier meets at run time.
* **Copies** (:func:`add_copies`) of a classifier set's crops: dimmer, flatter ones (:func:`low_contrast`) for
  dark dice with dark pips; ones with a lamp's soft white glint (:func:`specular_glint`), which on a dark die
  looks like a pip; ones a worse camera took (:func:`camera_degraded`: blur, shake, noise, JPEG, colour).

Every output is a pure function of the inputs and ``seed``.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterator
from pathlib import Path

import cv2
import numpy as np
import yaml

from kosti.vision.crops import CROP_SIZE, square_crop
from kosti.vision.detections import box_cover, box_iou
from kosti.vision.evaluate import read_labels as _read_labels
from kosti.vision.yolo_labels import FACE_CLASSES, label_path, single_class

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".webp"}


def split_images(data: Path, split: str) -> list[Path]:
    """Image files of one split of a YOLO dataset.

    Args:
        data: a ``data.yaml`` (paths relative to its folder, or to its ``path:`` key) or a folder with
            ``images/<split>`` (or ``images/``) and ``labels/...``.
        split: ``train``, ``val`` or ``test``.

    Raises:
        FileNotFoundError: the dataset or split does not exist.
    """
    data = Path(data)
    if data.is_file():
        cfg = yaml.safe_load(data.read_text())
        root = (data.parent / cfg.get("path", ".")).resolve()
        if split not in cfg:
            raise FileNotFoundError(f"{data}: no '{split}' split")
        entries = cfg[split] if isinstance(cfg[split], list) else [cfg[split]]
        dirs = [root / e for e in entries]
    else:
        dirs = [data / "images" / split] if (data / "images" / split).is_dir() else [data / "images"]
    files: list[Path] = []
    for d in dirs:
        if not d.is_dir():
            raise FileNotFoundError(f"image folder {d} does not exist")
        files += sorted(p for p in d.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    return files


def read_labels(image: Path, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """Read the YOLO labels of ``image`` → ``(boxes (N,4) float32 xyxy pixels, values (N,) int8 faces 1–6)``.

    The same reader :mod:`kosti.vision.evaluate` scores with (:func:`~kosti.vision.evaluate.read_labels`),
    so training and evaluation can never read a label file differently. A missing label file means no
    dice (an Ultralytics negative).

    Raises:
        DatasetError: a malformed line or a class outside 0–5 (a ``ValueError``, CLI exit code 2).
    """
    return _read_labels(label_path(image), width, height, FACE_CLASSES)


def prepare_detection(sources: list[tuple[Path, str]], out: Path, split: str) -> int:
    """Link the images of ``sources`` into ``out/images/<split>`` with one-class labels in ``out/labels/<split>``.

    Returns the number of images linked. File names are prefixed with the dataset folder's name so two
    sets cannot collide; a source listed more than once (to weigh a user's few photos against a large
    replay set) is linked once per listing.
    """
    img_dir, lab_dir = out / "images" / split, out / "labels" / split
    img_dir.mkdir(parents=True, exist_ok=True)
    lab_dir.mkdir(parents=True, exist_ok=True)
    n = 0
    written: set[str] = set()
    for data, src_split in sources:
        tag = Path(data).resolve().parent.name if Path(data).is_file() else Path(data).name
        for img in split_images(Path(data), src_split):
            name = f"{tag}__{img.name}"
            n_seen = 1
            while name in written:  # the same photo listed again (repeated to weigh it): one more link
                n_seen += 1
                name = f"{tag}__r{n_seen}__{img.name}"
            written.add(name)
            dst = img_dir / name
            if dst.is_symlink() or dst.exists():
                dst.unlink()
            os.symlink(img.resolve(), dst)
            lp = label_path(img)
            (lab_dir / Path(name).with_suffix(".txt")).write_text(single_class(lp.read_text() if lp.exists() else ""))
            n += 1
    return n


def _rotated(image: np.ndarray, centre: tuple[float, float], angle: float) -> np.ndarray:
    """The whole ``image`` rotated by ``angle`` degrees about ``centre`` (edges reflected). Reference for
    :func:`rotated_crop`, which gives the same crop without rotating the whole photo."""
    m = cv2.getRotationMatrix2D(centre, angle, 1.0)
    return cv2.warpAffine(image, m, (image.shape[1], image.shape[0]), borderMode=cv2.BORDER_REFLECT)


def rotated_crop(image: np.ndarray, centre: tuple[float, float], angle: float,
                 box: list[float] | np.ndarray, pad: float = 1.25) -> np.ndarray:
    """``square_crop(_rotated(image, centre, angle), box, pad)`` — a die crop of the photo turned by ``angle``
    degrees about ``centre`` — computed by cutting a patch around ``box`` first and rotating only the patch.

    Rotating a whole 12 MP photo for every crop took 5.4 of 9.8 minutes of a classifier-only ``kosti train``
    (issue 14); the patch is a few times the die, so the cost no longer grows with the photo. The patch
    reaches past the photo's edge with the same reflection (``BORDER_REFLECT``) the whole-image rotation
    used, so the crop is the same up to interpolation rounding (tested).

    Args:
        image: ``(H, W, 3)`` uint8 BGR photo. centre: ``(x, y)`` pixels, the rotation centre.
        angle: degrees, counter-clockwise (OpenCV's convention). box: ``[x1, y1, x2, y2]`` pixels of the crop's
            box in the rotated photo.

    Returns:
        ``(CROP_SIZE, CROP_SIZE, 3)`` uint8.
    """
    h, w = image.shape[:2]
    x1, y1, x2, y2 = (float(v) for v in box)
    half = max(x2 - x1, y2 - y1) * pad / 2
    bx, by = (x1 + x2) / 2, (y1 + y2) / 2
    # Source pixels of the crop square lie within (half·√2 + 2 px for interpolation) of its centre mapped
    # back through the rotation.
    m = cv2.getRotationMatrix2D(centre, angle, 1.0)
    inv = cv2.invertAffineTransform(m)
    sx, sy = inv @ np.array([bx, by, 1.0])
    r = int(np.ceil(half * 1.4143 + 3))
    x0, y0 = int(np.floor(sx)) - r, int(np.floor(sy)) - r
    size = 2 * r + 2
    if x0 < -w + 1 or y0 < -h + 1 or x0 + size > 2 * w - 1 or y0 + size > 2 * h - 1:
        return square_crop(_rotated(image, centre, angle), box, pad)  # a patch reflected more than once
    if x0 >= 0 and y0 >= 0 and x0 + size <= w and y0 + size <= h:
        patch = image[y0:y0 + size, x0:x0 + size]
    else:  # rows/columns past the edge come from the photo reflected there (BORDER_REFLECT: ...cba|abc...)
        rows, cols = np.arange(y0, y0 + size), np.arange(x0, x0 + size)
        rows = np.where(rows < 0, -rows - 1, np.where(rows >= h, 2 * h - rows - 1, rows))
        cols = np.where(cols < 0, -cols - 1, np.where(cols >= w, 2 * w - cols - 1, cols))
        patch = image[np.ix_(rows, cols)]
    m_patch = np.asarray(m, np.float64).copy()
    m_patch[:, 2] += m[:, :2] @ np.array([x0, y0], np.float64)  # patch coordinates in, photo coordinates out
    # Output: a window of the rotated photo around the crop square; the crop is then cut from it.
    # The window is clipped to the photo, so beyond it square_crop replicates the rotated photo's own edge,
    # as it does on the whole rotated photo.
    ox, oy = max(0, int(np.floor(bx - half)) - 2), max(0, int(np.floor(by - half)) - 2)
    ex, ey = min(w, int(np.ceil(bx + half)) + 3), min(h, int(np.ceil(by + half)) + 3)
    if ex <= ox or ey <= oy:
        return square_crop(_rotated(image, centre, angle), box, pad)  # the crop lies wholly off the photo
    m_patch[:, 2] -= np.array([ox, oy], np.float64)
    window = cv2.warpAffine(patch, m_patch, (ex - ox, ey - oy), borderMode=cv2.BORDER_REFLECT)
    return square_crop(window, [x1 - ox, y1 - oy, x2 - ox, y2 - oy], pad)


def _jittered_box(box: np.ndarray, rng: random.Random) -> tuple[tuple[float, float], list[float]]:
    """A die box as a detector might have drawn it: ``(centre, jittered box)`` of ``box`` ``[x1, y1, x2, y2]``
    (px), the box shifted by up to ±10 % of its size and scaled 0.9–1.1 (three draws of ``rng``, in that order);
    ``centre`` is the label box's own, the point :func:`rotated_crop` turns the photo about."""
    bw, bh = box[2] - box[0], box[3] - box[1]
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    jx, jy = rng.uniform(-0.1, 0.1) * bw, rng.uniform(-0.1, 0.1) * bh
    s = rng.uniform(0.9, 1.1)
    return (float(cx), float(cy)), [cx + jx - bw * s / 2, cy + jy - bh * s / 2, cx + jx + bw * s / 2, cy + jy + bh * s / 2]


def _class_folders(out: Path, split: str) -> dict[str, int]:
    """Make ``out/<split>/{1..6,x}`` and return a zero count per class name."""
    counts = {c: 0 for c in ["1", "2", "3", "4", "5", "6", "x"]}
    for c in counts:
        (out / split / c).mkdir(parents=True, exist_ok=True)
    return counts


def _labelled_photos(
    sources: list[tuple[Path, str]], stem_of: Callable[[Path, Path], str]
) -> Iterator[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """Each readable photo of ``sources`` (``(dataset, split)`` pairs, in order) as ``(stem, image (H, W, 3)
    uint8 BGR, label boxes (N, 4) float32 px, faces (N,))``; unreadable photos are skipped. ``stem_of(dataset,
    photo)`` names its crops; a photo listed again (a user's photos repeated to weigh them) gets ``_r2``, …
    so its new crops do not overwrite the first ones."""
    seen: dict[str, int] = {}
    for data, src_split in sources:
        for img_path in split_images(Path(data), src_split):
            image = cv2.imread(str(img_path), cv2.IMREAD_COLOR)
            if image is None:
                continue
            h, w = image.shape[:2]
            boxes, values = read_labels(img_path, w, h)
            stem = stem_of(Path(data), img_path)
            n_seen = seen[stem] = seen.get(stem, 0) + 1
            yield (f"{stem}_r{n_seen}" if n_seen > 1 else stem), image, boxes, values


def prepare_classification(
    sources: list[tuple[Path, str]],
    out: Path,
    split: str,
    per_die: int = 3,
    negatives_per_image: int = 2,
    seed: int = 0,
    max_angle: float = 180.0,
) -> dict[str, int]:
    """Write face-classifier crops for every labelled die of ``sources`` into ``out/<split>/<class>/``.

    Args:
        per_die: crops per die (each with its own box jitter and rotation).
        negatives_per_image: ``x`` crops per image (background patches and off-centre die edges).
        max_angle: largest rotation of a crop, degrees either way: 180 (any turn) for dice seen from above, whose
            face reads the same however they lie; small (10) keeps photos taken from the side *upright*, so
            that a classifier can learn that the face on top of the die is the one at the top of the crop.

    Returns:
        crop counts per class name.
    """
    rng = random.Random(seed)
    counts = _class_folders(out, split)
    for stem, image, boxes, values in _labelled_photos(sources, lambda data, img: img.stem[:60]):
        h, w = image.shape[:2]
        for i, (box, value) in enumerate(zip(boxes, values)):
            for k in range(per_die):
                angle = rng.uniform(-max_angle, max_angle)
                centre, jb = _jittered_box(box, rng)
                crop = rotated_crop(image, centre, angle, jb)
                cv2.imwrite(str(out / split / str(value) / f"{stem}_{i}_{k}.png"), crop)
                counts[str(value)] += 1
        # Negatives: background patches overlapping no die, and half-off-centre die edges.
        sizes = (boxes[:, 2:] - boxes[:, :2]).max(1) if len(boxes) else np.array([min(h, w) / 12])
        for k in range(negatives_per_image):
            side = float(rng.choice(list(sizes))) * rng.uniform(0.8, 1.2)
            for _ in range(20):
                if len(boxes) and rng.random() < 0.5:
                    # The edge of a die, as a badly placed box would show it: centre shifted 0.75–1.0
                    # of the die's size, so at most a sliver of its face is in the crop.
                    b = boxes[rng.randrange(len(boxes))]
                    bw, bh = b[2] - b[0], b[3] - b[1]
                    ang = rng.uniform(0, 2 * np.pi)
                    dx, dy = np.cos(ang) * bw * rng.uniform(0.75, 1.0), np.sin(ang) * bh * rng.uniform(0.75, 1.0)
                    nb = [b[0] + dx, b[1] + dy, b[2] + dx, b[3] + dy]
                else:
                    x0, y0 = rng.uniform(0, max(1, w - side)), rng.uniform(0, max(1, h - side))
                    nb = [x0, y0, x0 + side, y0 + side]
                if not len(boxes) or not _shows_a_die(np.array(nb, np.float32), boxes):
                    break
            else:
                continue
            cv2.imwrite(str(out / split / "x" / f"{stem}_neg{k}.png"), square_crop(image, nb))
            counts["x"] += 1
    return counts


def prepare_detector_crops(
    sources: list[tuple[Path, str]],
    out: Path,
    split: str,
    detect: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    per_die: int = 2,
    match_iou: float = 0.5,
    negative_iou: float = 0.1,
    max_negative_score: float = 0.45,
    max_negatives: int = 32,
    seed: int = 0,
) -> dict[str, int]:
    """Write face-classifier crops cut around a *detector's own boxes* into ``out/<split>/<class>/``.

    :func:`prepare_classification` cuts around the label boxes. At run time the classifier sees the
    detector's boxes instead, which differ where a dataset labels a die differently from how the detector
    boxes it (epanemu-dice labels the whole die seen from the side, the detector often only its top face),
    and its second look (:meth:`kosti.vision.reader.DiceReader.dice_mask`) judges the detector's weak boxes
    on clutter: number tokens, buttons, keys. This writes both as the reader will meet them:

    * a detector box matching a labelled die (IoU ``≥ match_iou``, one box per die, the best scored) gives
      ``per_die`` crops of *that box* (rotation, ±10 % jitter, as :func:`prepare_classification`) in the
      die's face class;
    * a box on no labelled die gives one ``x`` crop — the detector's hard negatives, at most
      ``max_negatives`` per photo (the best scored; the reader's second look also looks at 32 at most). "On
      no die" means IoU ``< negative_iou`` with every label, no label box covering a quarter of it (a box on
      one pip or on a die's top face is part of a die) and no die mostly inside its crop
      (:func:`_shows_a_die`: a box around several dice). Boxes scored above ``max_negative_score`` are
      skipped, not taken as negatives: a sure box on no label is more often a die the labels missed
      (epanemu-dice leaves far and edge dice unlabelled) than clutter.

    Args:
        sources: ``(dataset, split)`` pairs, as :func:`prepare_classification`.
        out: the ImageFolder root. split: the output split (``train`` / ``val``).
        detect: ``image (H, W, 3) uint8 BGR -> (xyxy (K, 4) float32 px, scores (K,) float32)``, e.g. a
            :class:`kosti.vision.reader.DiceReader`'s ``detector.detect`` at a low confidence.
        per_die: crops per matched die. seed: the jitter's and rotations' random seed.

    Files are named ``det_<dataset>_<photo stem>_<die>_<k>.png`` and ``..._neg<box>.png`` (a photo listed
    twice gets ``_r2``…), so two sets with the same photo names do not overwrite each other.

    Returns:
        crop counts per class name. Raises ``FileNotFoundError`` for a missing dataset or split.
    """
    rng = random.Random(seed)
    counts = _class_folders(out, split)
    for stem, image, boxes, values in _labelled_photos(sources, lambda data, img: f"det_{data.name[:30]}_{img.stem[:80]}"):
        xyxy, scores = detect(image)
        if not len(xyxy):
            continue
        iou = box_iou(boxes, xyxy) if len(boxes) else np.zeros((0, len(xyxy)), np.float32)
        for i, value in enumerate(values):
            hits = np.flatnonzero(iou[i] >= match_iou)
            if not len(hits):
                continue
            box = xyxy[hits[np.argmax(scores[hits])]]
            for k in range(per_die):
                centre, jb = _jittered_box(box, rng)
                crop = rotated_crop(image, centre, rng.uniform(-180, 180), jb)
                cv2.imwrite(str(out / split / str(value) / f"{stem}_{i}_{k}.png"), crop)
                counts[str(value)] += 1
        stray = (scores <= max_negative_score) & ~_on_a_die(xyxy, boxes, iou, negative_iou)
        for j in np.flatnonzero(stray)[:max_negatives]:
            cv2.imwrite(str(out / split / "x" / f"{stem}_neg{j}.png"), square_crop(image, xyxy[j]))
            counts["x"] += 1
    return counts


def _on_a_die(xyxy: np.ndarray, boxes: np.ndarray, iou: np.ndarray, min_iou: float) -> np.ndarray:
    """``(K,)`` bool: which boxes ``xyxy (K, 4)`` lie on a labelled die of ``boxes (N, 4)`` (``iou (N, K)``):
    IoU ``≥ min_iou`` with one, a quarter of the box covered by one (a pip, a top face), or a die mostly
    inside the box's crop (:func:`_shows_a_die`)."""
    if not len(boxes):
        return np.zeros(len(xyxy), bool)
    covered = box_cover(xyxy, boxes).max(1) >= 0.25
    shows = np.array([_shows_a_die(b, boxes) for b in xyxy], bool)
    on: np.ndarray = (iou.max(0) >= min_iou) | covered | shows
    return on


def _shows_a_die(box: np.ndarray, boxes: np.ndarray, pad: float = 1.25) -> bool:
    """True when the square crop that :func:`square_crop` cuts around ``box`` would show most of a die.

    A die counts as shown when its centre lies inside the crop square shrunk by a quarter of the die's
    size on every side, i.e. more than about three quarters of its face is in the picture.
    """
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    half = max(box[2] - box[0], box[3] - box[1]) * pad / 2
    dcx, dcy = (boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2
    margin = 0.25 * np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    inside = (np.abs(dcx - cx) < half - margin) & (np.abs(dcy - cy) < half - margin)
    return bool(inside.any())


def _check_crop(crop: np.ndarray) -> None:
    """Raise ``ValueError`` unless ``crop`` is an ``(h, w, 3)`` uint8 array (the copies' input)."""
    if crop.ndim != 3 or crop.shape[2] != 3 or crop.dtype != np.uint8:
        raise ValueError(f"expected an (h, w, 3) uint8 crop, got {crop.shape} {crop.dtype}")


def low_contrast(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A dimmer, flatter copy of a classifier crop: what a dark die with dark pips looks like (byler-d6's dark
    blue die with grey pips, its brown die with dark red pips: the reader's uncertain dice there).

    Pixel values are pulled toward the crop's mean (one grey level over all three channels, so colours also
    fade toward grey) by a factor drawn in [0.35, 0.7], then darkened by a gamma drawn in [1.1, 1.8]. Pips
    stay where they are and keep their order of brightness against the body, so the face does not change.
    On a crop of a die the spread of values falls; on a bright, nearly uniform crop the gamma can widen it
    a little.

    Args:
        crop: ``(h, w, 3)`` uint8 BGR.
        rng: the draws' source (the output is a pure function of ``crop`` and ``rng``'s state).

    Returns:
        ``(h, w, 3)`` uint8 BGR.

    Raises:
        ValueError: ``crop`` is not an ``(h, w, 3)`` uint8 array.
    """
    _check_crop(crop)
    k, gamma = rng.uniform(0.35, 0.7), rng.uniform(1.1, 1.8)
    x = crop.astype(np.float32) / 255.0
    x = x.mean() + (x - x.mean()) * k
    out: np.ndarray = (np.clip(x, 0.0, 1.0) ** gamma * 255.0 + 0.5).astype(np.uint8)
    return out


def specular_glint(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A copy of a classifier crop with a lamp's glint on it: one soft, near-white, often elongated spot, as
    a glossy die under a lamp above the table shows. byler-d6's black die showing 4 (test
    ``IMG_20191209_100023``) reads as a 5 in v1.1 (p 0.95): light on its centre looks like a fifth pip.

    The spot is a Gaussian ellipse: its centre drawn in the crop's middle 60 % (where the die is), its standard
    deviations along the two axes ``a`` in [3 %, 10 %] of the crop's shorter side and ``b`` in [1.5 %, 10 %]
    but at most ``a`` (so about 40 % of spots are round), at any angle. The crop is blended toward a warm white
    (B, G, R each in 235–255) by that Gaussian, peak weight in [0.7, 1.0], and never darkened.

    It only adds light, so on a dark die (the case it is for) the pips stay where they are. On a light die with
    dark pips a spot that falls on a pip can wash it out, and the copy then carries a face it no longer shows
    (a pip's centre turns lighter than mid-grey in 9–15 % of copies of a drawn white die with 3–5 black pips):
    label noise in ``cls_v9``'s data, which was measured with it and not shipped (``models/README.md``).

    Args:
        crop: ``(h, w, 3)`` uint8 BGR.
        rng: the draws' source (the output is a pure function of ``crop`` and ``rng``'s state).

    Returns:
        ``(h, w, 3)`` uint8 BGR, nowhere darker than ``crop``.

    Raises:
        ValueError: ``crop`` is not an ``(h, w, 3)`` uint8 array.
    """
    _check_crop(crop)
    h, w = crop.shape[:2]
    side = min(h, w)
    cx, cy = rng.uniform(0.2, 0.8) * w, rng.uniform(0.2, 0.8) * h
    a = rng.uniform(0.03, 0.10) * side
    b = min(a, rng.uniform(0.015, 0.10) * side)
    theta, peak = rng.uniform(0.0, np.pi), rng.uniform(0.7, 1.0)
    white = rng.uniform(235.0, 255.0, 3).astype(np.float32)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    u = (xx - cx) * np.cos(theta) + (yy - cy) * np.sin(theta)
    v = -(xx - cx) * np.sin(theta) + (yy - cy) * np.cos(theta)
    weight = (peak * np.exp(-0.5 * ((u / a) ** 2 + (v / b) ** 2)))[..., None]
    x = crop.astype(np.float32)
    out: np.ndarray = np.clip(np.maximum(x, x + (white - x) * weight) + 0.5, 0, 255).astype(np.uint8)
    return out


def turn_hue(image: np.ndarray, turn: int) -> np.ndarray:
    """``image`` ``(H, W, 3)`` uint8 BGR with every hue turned by ``turn`` OpenCV hue units (0–179; 1 unit = 2°)."""
    hsv = cv2.cvtColor(image, cv2.COLOR_BGR2HSV)
    hsv[..., 0] = ((hsv[..., 0].astype(np.int32) + turn) % 180).astype(np.uint8)
    out: np.ndarray = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)
    return out


def gamma_curve(image: np.ndarray, gamma: float) -> np.ndarray:
    """``image`` uint8 through the exposure curve ``255 · (v / 255) ** gamma`` (above 1 darker, below 1 brighter)."""
    lut = np.clip((np.arange(256) / 255.0) ** gamma * 255.0 + 0.5, 0, 255).astype(np.uint8)
    out: np.ndarray = cv2.LUT(image, lut)
    return out


def jpeg_roundtrip(image: np.ndarray, quality: int) -> np.ndarray:
    """``image`` ``(H, W, 3)`` uint8 BGR encoded as JPEG at ``quality`` (0–100) and decoded again.

    Raises:
        RuntimeError: OpenCV could not encode or decode it.
    """
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
    if decoded is None:
        raise RuntimeError(f"OpenCV could not encode and decode a {image.shape} frame as JPEG")
    out: np.ndarray = decoded
    return out


def camera_degraded(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A copy of a classifier crop as another set of dice under a worse camera would have looked: one to three
    of these changes, applied in the order light meets them — the dice's hue, focus blur, shake, low
    resolution, white balance, exposure, no colour, sensor noise, JPEG compression.

    The reader read byler-d6 test (dice ≈ 35 px) at die_accuracy 0.98 on the photos as shipped but 0.90
    with hues turned 120°, 0.91 in grey and 0.92 after JPEG at quality 20 (``benchmarks/robustness.py``):
    the classifier had learnt its dice's colours and a clean camera. Each fault's range keeps the pips
    readable to a person at 64 px (checked by eye on a sample of copies), so the face stays the label:

    * hue: every colour turned by the same angle, any (HSV; dice come in every body colour);
    * focus blur: Gaussian, σ in [0.5, 1.3] px;
    * shake: a motion blur along a straight line at any angle, its length drawn in [2, 5] px and rasterised in a
      3 or 5 px kernel (a few short, steep draws come out as one pixel: no blur);
    * low resolution: down to 40–70 % of the side (area) and back up (bilinear);
    * white balance: each channel's gain drawn in [0.75, 1.25], then divided by the three gains' mean (so 0.69–1.36);
    * exposure: gamma in [0.6, 1.6];
    * no colour: the grey level in every channel;
    * sensor noise: Gaussian per pixel and channel, σ in [3, 10] grey levels;
    * JPEG: quality 20–60.

    Args:
        crop: ``(h, w, 3)`` uint8 BGR.
        rng: the draws' source (the output is a pure function of ``crop`` and ``rng``'s state).

    Returns:
        ``(h, w, 3)`` uint8 BGR.

    Raises:
        ValueError: ``crop`` is not an ``(h, w, 3)`` uint8 array.
    """
    _check_crop(crop)
    h, w = crop.shape[:2]
    faults = set(rng.choice(len(CAMERA_FAULTS), size=int(rng.integers(1, 4)), replace=False).tolist())
    x = crop.copy()
    for i, fault in enumerate(CAMERA_FAULTS):
        if i not in faults:
            continue
        if fault == "hue":
            x = turn_hue(x, int(rng.integers(0, 180)))
        elif fault == "focus":
            x = cv2.GaussianBlur(x, (0, 0), float(rng.uniform(0.5, 1.3)))
        elif fault == "shake":
            length, angle = rng.uniform(2.0, 5.0), rng.uniform(0.0, np.pi)
            k = int(np.ceil(length)) | 1
            kernel = np.zeros((k, k), np.float32)
            c, dx, dy = k // 2, np.cos(angle) * (length - 1) / 2, np.sin(angle) * (length - 1) / 2
            cv2.line(kernel, (round(c - dx), round(c - dy)), (round(c + dx), round(c + dy)), 1.0, 1)
            x = cv2.filter2D(x, -1, kernel / kernel.sum(), borderType=cv2.BORDER_REFLECT)
        elif fault == "low_res":
            f = rng.uniform(0.4, 0.7)
            small = cv2.resize(x, (max(1, round(w * f)), max(1, round(h * f))), interpolation=cv2.INTER_AREA)
            x = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
        elif fault == "white_balance":
            gains = rng.uniform(0.75, 1.25, 3)
            x = np.clip(x.astype(np.float32) * (gains / gains.mean()) + 0.5, 0, 255).astype(np.uint8)
        elif fault == "exposure":
            x = gamma_curve(x, rng.uniform(0.6, 1.6))
        elif fault == "grey":
            x = cv2.cvtColor(cv2.cvtColor(x, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
        elif fault == "noise":
            x = np.clip(x.astype(np.float32) + rng.normal(0.0, rng.uniform(3.0, 10.0), x.shape), 0, 255).astype(np.uint8)
        elif fault == "jpeg":
            quality = int(rng.integers(20, 61))
            try:
                x = jpeg_roundtrip(x, quality)
            except RuntimeError:  # kept as it is, as before the helper
                pass
    out: np.ndarray = np.ascontiguousarray(x)
    return out


#: The faults :func:`camera_degraded` draws from, in the order it applies them.
CAMERA_FAULTS = ("hue", "focus", "shake", "low_res", "white_balance", "exposure", "grey", "noise", "jpeg")

#: Name prefixes of the copies :func:`add_copies` writes (``lc_`` low-contrast, ``gl_`` glint, ``cam_`` a worse
#: camera): never copied again.
COPY_PREFIXES = ("lc_", "gl_", "cam_")


def add_copies(root: Path, split: str, share: float, prefixes: tuple[str, ...], seed: int,
               transform: Callable[[np.ndarray, np.random.Generator], np.ndarray], tag: str) -> dict[str, int]:
    """Add ``transform``-ed copies of about a ``share`` (0–1; each crop drawn with that probability) of the
    crops of ImageFolder ``root/<split>/<class>/`` whose names start with one of ``prefixes`` (``()`` = every
    crop), in every class, ``x`` included (so that the change is no cue for a face). Copies are written as
    ``<tag><stem>.png``; a crop that is itself a copy (:data:`COPY_PREFIXES`) is not copied, so a second call
    with the same arguments writes the same files. Returns the number of copies written per class.

    Args:
        root: the ImageFolder (``root/<split>/<class>/*.png`` crops).
        split: ``"train"`` (or ``"val"``).
        share: probability (0–1) with which each crop is copied.
        prefixes: copy only crops whose names start with one of these (``()``: every crop).
        seed: with the class name, seeds the class's own generator (the draws and ``transform``'s).
        transform: ``(crop, rng) -> crop``, uint8 BGR in and out (:func:`low_contrast`,
            :func:`specular_glint`).
        tag: the copies' name prefix, one of :data:`COPY_PREFIXES`.

    Raises:
        FileNotFoundError: ``root/<split>`` is not a folder.
        ValueError: ``share`` is not in [0, 1], or ``tag`` is not a copy prefix.
    """
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must be in [0, 1], got {share}")
    if tag not in COPY_PREFIXES:
        raise ValueError(f"tag must be one of {COPY_PREFIXES}, got {tag!r}")
    base = Path(root) / split
    if not base.is_dir():
        raise FileNotFoundError(f"no ImageFolder split at {base}")
    counts: dict[str, int] = {}
    for cls_dir in sorted(p for p in base.iterdir() if p.is_dir()):
        rng = np.random.default_rng([seed, sum(map(ord, cls_dir.name))])
        n = 0
        for f in sorted(cls_dir.iterdir()):
            if f.name.startswith(COPY_PREFIXES) or (prefixes and not f.name.startswith(prefixes)):
                continue
            take = rng.random() < share
            crop = cv2.imread(str(f), cv2.IMREAD_COLOR) if take else None
            if crop is None:
                continue
            cv2.imwrite(str(cls_dir / f"{tag}{f.stem}.png"), transform(crop, rng))
            n += 1
        counts[cls_dir.name] = n
    return counts


__all__ = [
    "COPY_PREFIXES",
    "CROP_SIZE",
    "FACE_CLASSES",
    "CAMERA_FAULTS",
    "add_copies",
    "camera_degraded",
    "gamma_curve",
    "jpeg_roundtrip",
    "label_path",
    "low_contrast",
    "prepare_classification",
    "prepare_detection",
    "prepare_detector_crops",
    "read_labels",
    "rotated_crop",
    "specular_glint",
    "split_images",
    "turn_hue",
]
