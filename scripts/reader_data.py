"""The training sets of the reader's stages in ``scripts/finetune_reader.py``: detector data YAMLs (``det_data*``)
and face-classifier ImageFolders (``cls_data*``), each built once under ``runs/v02`` from ``../shared/datasets``
(or ``KOSTI_SHARED``), the synthetic generator and the lists under ``datasets/`` (label errors, hard negatives); a
rerun finds a built set and reuses it. Which stage trains on which set, and why: ``finetune_reader.py``'s docstring
and the model card.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("KOSTI_SHARED", REPO.parent / "shared" / "datasets"))
RUNS = REPO / "runs" / "v02"
IMAGE_EXT = (".jpg", ".jpeg", ".png")
def _images(folder: Path) -> list[str]:
    return sorted(str(p) for p in folder.glob("*") if p.suffix.lower() in IMAGE_EXT)


def _ensure_synth(out: Path, *extra: str) -> None:
    if not (out / "images").is_dir() and not (out / "train").is_dir():
        from kosti.cli import main as kosti

        seed = [] if "--seed" in extra else ["--seed", "1"]
        kosti(["datasets", "synth", "--out", str(out), *seed, *extra])


def det_data() -> Path:
    """Write ``runs/v02/det_data/data.yaml`` and its training list; returns the YAML path."""
    syn = _synth_images(REPO / "work" / "synth" / "det", "--n", "3000", "--classes", "die")
    random.Random(3).shuffle(syn)
    byler, rune = _images(SHARED / "byler-d6/images/train"), _images(SHARED / "rune55-dedup/images/train")
    return _det_yaml("det_data", byler * 2 + rune + syn[:1500])


def det_data_v3() -> Path:
    """Write ``runs/v02/det_v3_data/data.yaml``: :func:`det_data`'s real photos, the first 1,000 of its synthetic
    scenes, and 700 scenes of which 70 % are seen from the side (``--oblique 0.7``, seed 2)."""
    det_data()
    first = (RUNS / "det_data" / "train.txt").read_text().split()
    real = [f for f in first if "/synth/" not in f]
    syn = [f for f in first if "/synth/" in f]
    extra = _synth_images(REPO / "work" / "synth" / "det_oblique", "--n", "700", "--classes", "die", "--oblique", "0.7",
                          "--seed", "2")
    return _det_yaml("det_v3_data", real + syn[:1000] + extra)


def det_data_v4() -> Path:
    """Write ``runs/v02/det_v4_data/data.yaml``: :func:`det_data_v3`'s real photos and oblique scenes, with
    its 1,000 top-down synthetic scenes swapped for 1,000 new ones, half of them seen from the side
    (``--oblique 0.5``, seed 3): new dice, table tops and views for the same number of images."""
    det_data_v3()
    v3 = (RUNS / "det_v3_data" / "train.txt").read_text().split()
    kept = [f for f in v3 if "/synth/det/" not in f]
    extra = _synth_images(REPO / "work" / "synth" / "det_v4", "--n", "1000", "--classes", "die", "--oblique", "0.5",
                          "--seed", "3")
    return _det_yaml("det_v4_data", kept + extra)


def det_data_v5() -> Path:
    """Write ``runs/v02/det_v5_data/data.yaml``: real photos of three sets and fresh wide synthetic scenes.

    epanemu-dice train (872 images: coloured and translucent dice, a Catan board with number tokens, felt,
    oblique views), byler-d6 train (200), a seeded 250 of rune55-dedup train (the set v0.3 already reads
    well; kept so it is not forgotten), and 300 scenes of the wide generator (``--wide --oblique 0.5
    --seed 5``: every colour and material of die, hard negatives such as number tokens, dominoes and
    keyboards). Validation: epanemu val (selection only). epanemu's three augmented copies of a source
    photo all stay in train, and its val shares no source photo with train (its SOURCE.md), so no grouping
    is needed here. Sized to train on 2 shared CPU cores within a session (~1,600 images an epoch).
    """
    rune = _images(SHARED / "rune55-dedup/images/train")
    random.Random(5).shuffle(rune)
    real = (_images(SHARED / "epanemu-dice/images/train") + _images(SHARED / "byler-d6/images/train")
            + sorted(rune[:250]))
    extra = _synth_images(REPO / "work" / "synth" / "det_v5_wide", "--n", "300", "--classes", "die", "--oblique",
                          "0.5", "--wide", "--seed", "5")
    return _det_yaml("det_v5_data", real + extra, val=SHARED / "epanemu-dice/images/val")


def det_data_v6() -> Path:
    """Write ``runs/v02/det_v6_data/data.yaml``: :func:`det_data_v5`'s images with twice the rune55-dedup train
    photos (a seeded 500 instead of 250, the first 250 the same), so that longer training on epanemu-dice does
    not forget the top-down trays rune55 shows. Validation: epanemu val (selection only)."""
    rune = _images(SHARED / "rune55-dedup/images/train")
    random.Random(5).shuffle(rune)
    real = (_images(SHARED / "epanemu-dice/images/train") + _images(SHARED / "byler-d6/images/train")
            + sorted(rune[:500]))
    extra = _synth_images(REPO / "work" / "synth" / "det_v5_wide", "--n", "300", "--classes", "die", "--oblique",
                          "0.5", "--wide", "--seed", "5")
    return _det_yaml("det_v6_data", real + extra, val=SHARED / "epanemu-dice/images/val")


#: epanemu-dice train photos whose labels are empty though they show dice (all three augmented copies): dice_417,
#: 15 pip dice on purple felt. Training on them teaches the detector that such dice are background.
EMPTY_LABELLED_DICE = ("dice_417_jpg",)


def det_data_v10() -> Path:
    """Write ``runs/v02/det_v10_data/data.yaml``: :func:`det_data_v6`'s images without :data:`EMPTY_LABELLED_DICE`,
    plus a copy of a third of its real photos (seeded; each copy's faults seeded by its photo's place) as another
    set of dice under a worse camera would show
    them (:func:`kosti.datasets.prepare.camera_degraded` on the whole frame, saved as JPEG quality 95, the photo's
    labels copied beside it). Noise or a warm lamp make v1.2's detector box the holes of byler-d6's tray rim and
    miss dice (``benchmarks/robustness.py``). Validation: epanemu val (selection only)."""
    import cv2
    import numpy as np

    from kosti.datasets.prepare import camera_degraded

    root = RUNS / "det_v10_data"
    images = [p for p in (det_data_v6().parent / "train.txt").read_text().split()
              if not Path(p).name.startswith(EMPTY_LABELLED_DICE)]
    real = [p for p in images if p.startswith(str(SHARED))]
    from kosti.vision.yolo_labels import label_path

    out_img, out_lbl = root / "images" / "train", root / "labels" / "train"
    out_img.mkdir(parents=True, exist_ok=True)
    out_lbl.mkdir(parents=True, exist_ok=True)
    picked = np.random.default_rng(41).random(len(real)) < 1 / 3  # drawn first: a rerun picks the same photos
    copies = []
    for i, p in enumerate(real):
        if not picked[i]:
            continue
        src = Path(p)
        dst = out_img / f"cam_{src.parent.parent.parent.name}_{src.stem}.jpg"
        label = out_lbl / f"{dst.stem}.txt"
        if not (dst.exists() and label.exists()):  # the label first: an interrupted copy is never background
            frame = cv2.imread(str(src), cv2.IMREAD_COLOR)
            if frame is None:
                raise OSError(f"cannot read {src}")
            shutil.copyfile(label_path(src), label)
            cv2.imwrite(str(dst), camera_degraded(frame, np.random.default_rng([41, i])), [cv2.IMWRITE_JPEG_QUALITY, 95])
        copies.append(str(dst))
    print(f"det_v10_data: {len(images)} images, {len(copies)} worse-camera copies")
    return _det_yaml("det_v10_data", images + copies, val=SHARED / "epanemu-dice/images/val")


def cls_data_v5() -> Path:
    """Build the ImageFolder ``runs/v02/cls_v5_data/{train,val}/{1..6,x}``; returns its root.

    Real crops only (``prepare_classification``): epanemu-dice train 3 per die (coloured, translucent and
    oblique dice v0.3 misread), byler-d6 train 2 per die, rune55-dedup train 2 per die; val 1 per die of
    epanemu val and rune55 val.
    """
    from kosti.datasets.prepare import prepare_classification

    def fill(tmp: Path) -> None:
        prepare_classification([(SHARED / "epanemu-dice", "train")], tmp, "train", per_die=3, seed=20)
        prepare_classification([(SHARED / "byler-d6", "train"), (SHARED / "rune55-dedup", "train")], tmp, "train",
                               per_die=2, seed=21)
        prepare_classification([(SHARED / "epanemu-dice", "val"), (SHARED / "rune55-dedup", "val")], tmp, "val",
                               per_die=1, seed=22)

    return _build_once(RUNS / "cls_v5_data", fill)


def _images_paths(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_EXT)


def _build_once(root: Path, fill: Callable[[Path], None]) -> Path:
    """The ImageFolder ``root``, built when it has no ``train`` split yet: ``fill(tmp)`` writes it into a fresh
    ``root.tmp``, which is then renamed to ``root`` (an interrupted build leaves only the ``.tmp``, rebuilt on the
    next run). Returns ``root``."""
    if (root / "train").is_dir():
        return root
    tmp = root.with_name(root.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    fill(tmp)
    tmp.rename(root)
    return root


def _extended_copy(root: Path, train: Path, val: Path, add: Callable[[Path], None]) -> Path:
    """Build the ImageFolder ``root`` (:func:`_build_once`): ``train`` and ``val`` (split folders) hard-linked in,
    then ``add(tmp)`` writes the new crops there. Returns ``root``."""
    def fill(tmp: Path) -> None:
        shutil.copytree(train, tmp / "train", copy_function=os.link)
        shutil.copytree(val, tmp / "val", copy_function=os.link)
        add(tmp)

    return _build_once(root, fill)


def cls_data_v5m() -> Path:
    """Build the ImageFolder ``runs/v02/cls_v5m_data``: v0.3's crops (:func:`cls_data` with the ``*PXL*``
    extras) hard-linked, plus the epanemu-dice train crops of :func:`cls_data_v5`; validation is
    cls_v5's (epanemu val + rune55 val, 1 per die). Returns its root."""
    root = RUNS / "cls_v5m_data"
    if (root / "train").is_dir():
        return root
    base, v5 = cls_data(pxl_extra=9), cls_data_v5()
    epanemu = tuple(p.stem for p in _images_paths(SHARED / "epanemu-dice/images/train"))

    def add(tmp: Path) -> None:
        for f in (v5 / "train").glob("*/*.png"):
            if f.name.startswith(epanemu):  # crops are named <photo stem>_<i>_<j>.png
                os.link(f, tmp / "train" / f.parent.name / f"v5_{f.name}")

    return _extended_copy(root, base / "train", v5 / "val", add)


def _tag(ckpt: Path) -> str:
    """A name for a model file in run names: its stem, after its run's name for ``<run>/weights/<stem>``."""
    return f"{ckpt.parent.parent.name}_{ckpt.stem}" if ckpt.parent.name == "weights" else ckpt.stem


def cls_data_v7(det: Path) -> Path:
    """Build the ImageFolder ``runs/v02/cls_v7_data_<det>`` (:func:`_tag`): :func:`cls_data_v5m`'s crops hard-linked,
    plus crops cut around the detector ``det``'s own boxes on the train splits
    (:func:`kosti.datasets.prepare.prepare_detector_crops` at the second look's floor, score > 0.05):
    epanemu-dice train 2 per matched die, byler-d6 and rune55-dedup train 1, and the detector's unmatched
    weak boxes as ``x`` (the number tokens, buttons and keys the second look must turn down). Validation is
    cls_v5's. Returns its root."""
    from kosti.datasets.prepare import prepare_detector_crops
    from kosti.vision.reader import DiceReader

    root = RUNS / f"cls_v7_data_{_tag(det)}"
    if (root / "train").is_dir():
        return root
    base = cls_data_v5m()
    detector = DiceReader(det, None, threads=os.cpu_count() or 1).detector

    def detect(image):
        xyxy, scores, _ = detector.detect(image, 0.05)
        return xyxy, scores

    def add(tmp: Path) -> None:
        print(prepare_detector_crops([(SHARED / "epanemu-dice", "train")], tmp, "train", detect, per_die=2, seed=30))
        print(prepare_detector_crops([(SHARED / "byler-d6", "train"), (SHARED / "rune55-dedup", "train")], tmp,
                                     "train", detect, per_die=1, seed=31))

    return _extended_copy(root, base / "train", base / "val", add)


def _with_copies(root: Path, base: Callable[[], Path], transform: Callable[..., Any], tag: str, seed: int,
                 share: float = 0.25) -> Path:
    """Build the ImageFolder ``root`` (unless it is built): ``base()``'s crops hard-linked, plus ``transform``-ed
    copies named ``<tag><stem>.png`` of a ``share`` of its original train crops (every class, ``x`` too), by
    :func:`kosti.datasets.prepare.add_copies` with ``seed``. Validation is ``base()``'s. Returns ``root``."""
    from kosti.datasets.prepare import add_copies

    if (root / "train").is_dir():
        return root
    src = base()
    return _extended_copy(root, src / "train", src / "val", lambda tmp: print(
        add_copies(tmp, "train", share=share, prefixes=(), seed=seed, transform=transform, tag=tag)))


def cls_data_v8(det: Path) -> Path:
    """Build the ImageFolder ``runs/v02/cls_v8_data_<det>``: :func:`cls_data_v7`'s crops plus a dimmer, flatter
    copy (:func:`kosti.datasets.prepare.low_contrast`) of a quarter of them. Dark dice with dark pips are what
    v1.1 leaves uncertain on byler-d6 test. Returns its root."""
    from kosti.datasets.prepare import low_contrast

    return _with_copies(RUNS / f"cls_v8_data_{_tag(det)}", lambda: cls_data_v7(det), low_contrast, "lc_", seed=32)


def cls_data_v9(det: Path) -> Path:
    """Build the ImageFolder ``runs/v02/cls_v9_data_<det>``: :func:`cls_data_v8`'s crops plus a copy with a lamp's
    glint (:func:`kosti.datasets.prepare.specular_glint`) of a quarter of its original crops. Light on a black
    die's centre is what v1.1 reads as a fifth pip on byler-d6 test. Returns its root."""
    from kosti.datasets.prepare import specular_glint

    return _with_copies(RUNS / f"cls_v9_data_{_tag(det)}", lambda: cls_data_v8(det), specular_glint, "gl_", seed=34)


def cls_data_v10(det: Path) -> Path:
    """Build the ImageFolder ``runs/v02/cls_v10_data_<det>``: :func:`cls_data_v7`'s crops plus a copy of 40 % of
    them as other dice under a worse camera would look (:func:`kosti.datasets.prepare.camera_degraded`: hue,
    blur, shake, low resolution, white balance, exposure, grey, noise, JPEG). v1.2 reads byler-d6 test at
    die_accuracy 0.98, but 0.90–0.92 with its hues turned, in grey or through strong JPEG
    (``benchmarks/robustness.py``). Returns its root."""
    from kosti.datasets.prepare import camera_degraded

    return _with_copies(RUNS / f"cls_v10_data_{_tag(det)}", lambda: cls_data_v7(det), camera_degraded, "cam_",
                        seed=36, share=0.4)


def cls_data_v11() -> Path:
    """Build the ImageFolder ``runs/v02/cls_v11_data``: real crops of the shared train splits (byler-d6 and
    rune55-dedup 1 per die, epanemu-dice 2, each photo with 2 background ``x`` patches; the replay that keeps what
    the classifier knows) plus 6 ``x`` crops (turned, ±10 % jitter) of each box of
    ``datasets/hard_negatives/rune55-dedup-train.json``: picture dice, numeral balls, buttons and blank faces the
    detector boxes surely (0.3–0.8) and the second look's ``x`` never saw, because :func:`cls_data_v7` skips sure
    boxes on no label. Validation: epanemu val + rune55 val, 1 per die. Returns its root."""
    import cv2
    import numpy as np

    from kosti.datasets.prepare import _jittered_box, prepare_classification, rotated_crop

    def fill(tmp: Path) -> None:
        prepare_classification([(SHARED / "byler-d6", "train"), (SHARED / "rune55-dedup", "train")], tmp, "train",
                               per_die=1, seed=50)
        prepare_classification([(SHARED / "epanemu-dice", "train")], tmp, "train", per_die=2, seed=51)
        prepare_classification([(SHARED / "epanemu-dice", "val"), (SHARED / "rune55-dedup", "val")], tmp, "val",
                               per_die=1, seed=52)
        listed = json.loads((REPO / "datasets" / "hard_negatives" / "rune55-dedup-train.json").read_text())
        rng = random.Random(53)
        for k, row in enumerate(listed["negatives"]):
            image = cv2.imread(str(SHARED / listed["set"] / row["photo"]), cv2.IMREAD_COLOR)
            if image is None:
                raise OSError(f"cannot read {row['photo']}")
            for j in range(6):
                centre, box = _jittered_box(np.array(row["box_xyxy_px"], np.float64), rng)
                crop = rotated_crop(image, centre, rng.uniform(-180, 180), box)
                cv2.imwrite(str(tmp / "train" / "x" / f"hn_{k}_{j}.png"), crop)

    return _build_once(RUNS / "cls_v11_data", fill)


def cls_data_v12() -> Path:
    """Build the ImageFolder ``runs/v02/cls_v12_data``: the crops of dice seen from the side kept **upright**.

    epanemu-dice train's photos are taken from a seated player's height: a die shows its top face and one or two
    side faces, and the top face is the one at the top of the photo. Every earlier classifier was trained on
    crops turned at random (and read in four turns), so it could not tell the top face from the one facing the
    camera, and read the side faces of epanemu val's heaps (the audit of 2026-12-03, late). Here epanemu train
    gives 3 crops per die turned by at most ±10°; byler-d6 and rune55-dedup train (mostly seen from above, any
    turn reads the same) 1 per die turned at random, each photo with 2 background ``x`` patches; validation:
    epanemu val upright, rune55 val turned. Returns its root."""
    from kosti.datasets.prepare import prepare_classification

    def fill(tmp: Path) -> None:
        prepare_classification([(SHARED / "byler-d6", "train"), (SHARED / "rune55-dedup", "train")], tmp, "train",
                               per_die=1, seed=60)
        prepare_classification([(SHARED / "epanemu-dice", "train")], tmp, "train", per_die=3, seed=61,
                               max_angle=10.0)
        prepare_classification([(SHARED / "epanemu-dice", "val")], tmp, "val", per_die=1, seed=62, max_angle=10.0)
        prepare_classification([(SHARED / "rune55-dedup", "val")], tmp, "val", per_die=1, seed=63)

    return _build_once(RUNS / "cls_v12_data", fill)


def cls_data_v13() -> Path:
    """Build the ImageFolder ``runs/v02/cls_v13_data``: :func:`cls_data_v12`'s crops plus a second turned crop of
    every byler-d6 and rune55-dedup train die (so that the dice seen from above weigh as much as in the shipped
    classifier's data: cls_v12's byler-d6 test reads fell 0.981 → 0.971). Validation: cls_v12's. Returns its
    root."""
    from kosti.datasets.prepare import prepare_classification

    root = RUNS / "cls_v13_data"
    if (root / "train").is_dir():
        return root
    v12 = cls_data_v12()

    def add(tmp: Path) -> None:
        more = tmp.with_name(tmp.name + ".more")
        shutil.rmtree(more, ignore_errors=True)
        prepare_classification([(SHARED / "byler-d6", "train"), (SHARED / "rune55-dedup", "train")], more, "train",
                               per_die=1, negatives_per_image=0, seed=64)
        for f in (more / "train").glob("*/*.png"):
            os.replace(f, tmp / "train" / f.parent.name / f"b_{f.name}")
        shutil.rmtree(more)

    return _extended_copy(root, v12 / "train", v12 / "val", add)


#: Share of cls_v13's crops kept in :func:`cls_data_v15` (seeded; the rest of its data is new).
V15_REHEARSAL_SHARE = 1 / 3


def thin_crops(train: Path, keep: float, seed: int) -> int:
    """Delete all but a seeded share ``keep`` of the crops in each class folder of ``train`` (``<class>/*.png``;
    hard links of another set: that set keeps its files). The choice depends only on the file names and ``seed``.
    Returns the number of crops kept."""
    kept = 0
    for folder in sorted(p for p in train.iterdir() if p.is_dir()):
        files = sorted(folder.glob("*.png"))
        chosen = set(random.Random(f"{seed}-{folder.name}").sample(range(len(files)), round(keep * len(files))))
        for i, f in enumerate(files):
            if i not in chosen:
                f.unlink()
        kept += len(chosen)
    return kept


def cls_data_v15() -> Path:
    """Build the ImageFolder ``runs/v02/cls_v15_data`` (reader v2's classifier, issue 38): :func:`cls_data_v13`'s
    crops plus

    * damiantab-d6 **train** (real ivory dice on carpet, paper, wood and woven fabric, seen from above: the plain
      overhead dice v1.3 read 6 as 5 on), 6 crops per die turned at random, 3 background ``x`` patches a photo;
    * rendered plain dice seen from straight above under a hard shadow, 25–40 px at 720×576
      (:func:`kosti.datasets.rendered_crops.overhead_plain_crops`, 500 scenes, about 2,200 crops);
    * rendered faces that are no pip face (:func:`kosti.datasets.rendered_crops.unknown_face_crops`: numeral, skull
      and emblem d6 faces, d8 and d10 faces; 3,000 crops), half of them as ``x`` and half as a face drawn at random
      (outlier exposure), so that a custom face reads as uncertain: neither a face nor surely "no die".

    Of cls_v13's own crops a seeded third is kept (:func:`thin_crops`; rehearsal, so that the fine-tune does not
    forget them): on a 2-core machine shared with other work, an epoch of all 31,000 took too long. Never
    damiantab-d6 val, banachowicz-d6 or skovy-webcam (evaluation only). Validation: cls_v13's. Returns its root."""
    from kosti.datasets.prepare import prepare_classification
    from kosti.datasets.rendered_crops import overhead_plain_crops, unknown_face_crops

    root = RUNS / "cls_v15_data"
    if (root / "train").is_dir():
        return root
    v13 = cls_data_v13()

    def add(tmp: Path) -> None:
        thin_crops(tmp / "train", V15_REHEARSAL_SHARE, seed=149)
        more = tmp.with_name(tmp.name + ".more")
        shutil.rmtree(more, ignore_errors=True)
        prepare_classification([(SHARED / "damiantab-d6", "train")], more, "train", per_die=6, negatives_per_image=3,
                               seed=150)
        for f in (more / "train").glob("*/*.png"):
            os.replace(f, tmp / "train" / f.parent.name / f"dt_{f.name}")
        shutil.rmtree(more)
        overhead_plain_crops(tmp, "train", 500, seed=151)
        unknown_face_crops(tmp, "train", 3000, seed=152)

    return _extended_copy(root, v13 / "train", v13 / "val", add)


def _synth_images(out: Path, *args: str) -> list[str]:
    """The images of the synthetic scenes at ``out`` (train then val split), made first (``kosti datasets
    synth --out out *args``) when missing."""
    _ensure_synth(out, *args)
    return _images(out / "images" / "train") + _images(out / "images" / "val")


def _det_yaml(name: str, images: list[str], val: Path = SHARED / "rune55-dedup/images/val") -> Path:
    """Write ``runs/v02/<name>/train.txt`` (``images``, one per line) and its ``data.yaml`` (one class
    ``die``, validation on ``val``, rune55 val by default); returns the YAML path."""
    root = RUNS / name
    root.mkdir(parents=True, exist_ok=True)
    (root / "train.txt").write_text("\n".join(images) + "\n")
    yaml = root / "data.yaml"
    yaml.write_text(f"train: {root / 'train.txt'}\nval: {val}\nnames:\n  0: die\n")
    return yaml


def cls_data(pxl_extra: int = 0) -> Path:
    """Build the ImageFolder ``runs/v02/cls_data/{train,val}/{1..6,x}``; returns its root.

    ``pxl_extra``: also this many more crops per die of the rune55 train photos named ``*PXL*`` (in
    ``runs/v02/cls_data_pxl``, the base set hard-linked plus the extra crops).
    """
    from kosti.datasets.prepare import prepare_classification

    root = RUNS / "cls_data"
    if pxl_extra:
        out = RUNS / "cls_data_pxl"
        if not (out / "train").is_dir():
            base = cls_data()
            src = RUNS / "pxl_src"
            for sub in ("images", "labels"):
                (src / sub / "train").mkdir(parents=True, exist_ok=True)
            for img in (SHARED / "rune55-dedup/images/train").glob("*PXL*"):
                lab = SHARED / "rune55-dedup/labels/train" / f"{img.stem}.txt"
                for s, d in ((img, src / "images/train" / img.name), (lab, src / "labels/train" / lab.name)):
                    if not d.exists():
                        d.symlink_to(s)
            extra, tmp = RUNS / "cls_pxl_extra", RUNS / "cls_data_pxl.tmp"
            for d in (extra, tmp):
                shutil.rmtree(d, ignore_errors=True)
            prepare_classification([(src, "train")], extra, "train", per_die=pxl_extra, negatives_per_image=0, seed=7)
            shutil.copytree(base, tmp, copy_function=os.link)
            for f in (extra / "train").glob("*/*.png"):  # prefixed: the base set's crops keep their names
                os.link(f, tmp / "train" / f.parent.name / f"pxl_{f.name}")
            tmp.rename(out)
        return out
    if (root / "train").is_dir():
        return root
    synth = REPO / "work" / "synth" / "cls"
    _ensure_synth(synth, "--n", "8000", "--crops")
    tmp = RUNS / "cls_data.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    real = [(SHARED / "byler-d6", "train"), (SHARED / "rune55-dedup", "train")]
    prepare_classification(real, tmp, "train", per_die=3, seed=0)
    prepare_classification([(SHARED / "rune55-dedup", "val")], tmp, "val", per_die=1, seed=1)
    for split in ("train", "val"):
        for src in (synth / split).glob("*/*.png"):
            dst = tmp / split / src.parent.name / f"s_{src.name}"
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dst)
    tmp.rename(root)
    return root
