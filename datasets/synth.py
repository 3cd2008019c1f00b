"""Seeded cut-and-paste scenes of d6 dice for training the detector and the face classifier.

Each scene is a square image (default 640 px) with 0–6 dice on a table top, built from

* **real dice** cut from the *training* splits of the shared photos (``byler-d6/train`` and
  ``rune55-dedup/train``; the test/val splits and ``skovy-webcam`` are never read) with a soft
  super-elliptic alpha around each labelled box;
* **procedural dice** from :func:`kosti.sim.render.render_die` (named or random styles, slight
  camera tilt, glare, translucency, the occasional *cocked* die leaning on something);
* **table tops**: procedural felt, cloth, wood, paper, trays, dark and light surfaces
  (:func:`kosti.sim.render.make_background`), plus random crops of real training photos with their
  dice painted out (inpainting at ¼ scale);
* **distractors**: hand-like blobs, cup rims, coins, pens, cards, pipless dice-like cubes —
  sometimes covering dice, and alone in empty "negative" scenes;

with drop shadows, touching and partly hidden dice, dice cut by the frame edge, a random perspective
warp, motion blur (rolling dice or camera shake), defocus, colour/brightness shifts, grayscale
(most rune55 photos are grayscale), sensor noise, glare and JPEG artefacts.

Labels follow what a camera can show: a die counts as *visible* when at least
``SynthConfig.min_visible`` (60 %) of its silhouette shows in the frame; less visible dice get no
detector label. Its face is *readable* when nothing hides a pip (procedural dice: every pip centre is
visible; real crops, whose pips are not known: ≥ 92 % visible), it is not cocked, blur is below a
quarter of its size, and its pixels still span ≥ 20 grey levels (glare and exposure can wash pips out). Outputs (see :func:`generate`):

* ``--classes die``: every visible die, class 0;
* ``--classes faces``: every visible *readable* die, class ``value - 1`` (visible but unreadable dice
  get no box, since no face class is right for them);
* ``--crops``: classifier crops made with :func:`kosti.vision.crops.square_crop` around the die's
  visible box jittered by ±10 % per side (the error of a detector's box); class ``1``–``6`` for
  readable dice, ``x`` for hidden/blurred/cocked/edge dice, distractors and bare table patches.

Modules: settings and sources :mod:`~kosti.datasets.synth_config`, real crops and table tops
:mod:`~kosti.datasets.synth_real`, dice and distractor sprites :mod:`~kosti.datasets.synth_sprites`,
one scene and its crops :mod:`~kosti.datasets.synth_scene`; this module writes data sets (:func:`generate`).

Every scene is a pure function of ``(seed, index, settings, source photos)``: scene ``i`` draws from
``numpy.random.default_rng([seed, i])`` only, so any worker count gives byte-identical files.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import shutil
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import cv2
import numpy as np

from kosti.datasets.synth_config import (  # noqa: F401 - re-exported: the generator's API in one place
    _IMAGE_SUFFIXES,
    ATTRIBUTION,
    CROP_CLASSES,
    DEFAULT_REAL_ROOT,
    REAL_SOURCES,
    SynthConfig,
    SynthError,
)
from kosti.datasets.synth_real import RealBank, RealCrop, real_background  # noqa: F401 - re-exported
from kosti.datasets.synth_scene import Scene, SceneDie, SceneGenerator, scene_crops  # noqa: F401 - re-exported
from kosti.vision.yolo_labels import label_lines, label_text

# ---------------------------------------------------------------------------------------------------
# Writing datasets
# ---------------------------------------------------------------------------------------------------


@dataclass
class SynthSummary:
    """What :func:`generate` wrote: ``scenes`` images (detector mode) or crops per class (crops mode),
    ``labels`` detector boxes written, ``per_split`` item counts."""

    out: Path
    scenes: int = 0
    labels: int = 0
    per_split: dict[str, int] = field(default_factory=lambda: {"train": 0, "val": 0})
    per_class: dict[str, int] = field(default_factory=dict)


def yolo_lines(labels: list[tuple[int, tuple]], imgsz: int) -> str:
    """Label file text of ``(class, (x1, y1, x2, y2) pixels)`` pairs: ``class cx cy w h`` lines normalised
    to the square ``imgsz`` image, 6 decimals (:func:`kosti.vision.yolo_labels.label_lines`; the boxes
    are already inside the image, so they are written unchecked)."""
    xyxy = np.array([box for _, box in labels], np.float64).reshape(-1, 4)
    return label_text(label_lines(xyxy, [k for k, _ in labels], imgsz, imgsz, check=False))


_WORKER: dict = {}


def _worker_init(cfg: SynthConfig, seed: int, real_root: str | None, real_limit: int | None, crops: bool) -> None:
    bank = RealBank.load(real_root, real_limit) if real_root is not None else None
    _WORKER["gen"] = SceneGenerator(cfg, bank, seed)
    _WORKER["crops"] = crops


def _work(index: int) -> tuple[int, str, list[tuple[str, bytes]]]:
    """Make scene ``index`` → ``(index, split, [(relative path, file bytes), ...])``."""
    gen: SceneGenerator = _WORKER["gen"]
    cfg = gen.cfg
    scene = gen.scene(index)
    split = "val" if np.random.default_rng([gen.seed, index, 7]).random() < cfg.val_frac else "train"
    name = f"s{gen.seed}_{index:07d}"
    ok, jpg = cv2.imencode(".jpg", scene.image, [cv2.IMWRITE_JPEG_QUALITY, scene.jpeg_quality])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    if not _WORKER["crops"]:
        labels = scene.detector_labels(cfg.classes, cfg.min_visible)
        return index, split, [(f"images/{split}/{name}.jpg", jpg.tobytes()),
                              (f"labels/{split}/{name}.txt", yolo_lines(labels, cfg.imgsz).encode())]
    # Crops are cut from the JPEG-degraded image, as the reader sees camera frames.
    decoded = cv2.imdecode(jpg, cv2.IMREAD_COLOR)
    assert decoded is not None  # the JPEG encoded just above
    scene.image = decoded
    files = []
    for k, (label, crop) in enumerate(scene_crops(scene, np.random.default_rng([gen.seed, index, 11]), cfg.min_visible)):
        ok, png = cv2.imencode(".png", crop)
        files.append((f"{split}/{label}/{name}_{k:02d}.png", png.tobytes()))
    return index, split, files


def generate(
    out: Path | str,
    n: int,
    seed: int = 1,
    *,
    cfg: SynthConfig | None = None,
    crops: bool = False,
    real_root: Path | str | None = DEFAULT_REAL_ROOT,
    real_limit: int | None = None,
    workers: int = 1,
    overwrite: bool = False,
    progress: bool = True,
) -> SynthSummary:
    """Write a synthetic data set to ``out``.

    Detector mode (default): ``n`` scenes as ``out/images/{train,val}/*.jpg`` with YOLO labels
    ``out/labels/{train,val}/*.txt`` (empty file = negative) and ``out/data.yaml`` (paths relative to
    the YAML's folder; Ultralytics resolves them that way when the YAML has no ``path:`` key).

    Crops mode (``crops=True``): ``n`` classifier crops (64×64 PNG) as ImageFolder
    ``out/{train,val}/{1,2,3,4,5,6,x}/*.png`` (all 14 folders are created).

    Both write ``out/synth.json`` (the settings) and, when real photos are used, ``out/ATTRIBUTION.md``.

    Args:
        out: output folder; must be empty or absent (or made by this tool, with ``overwrite``).
        n: number of scenes (detector mode) or crops (crops mode), ≥ 1.
        seed: series seed — same seed, settings and photos → byte-identical files.
        cfg: generator settings (default :class:`SynthConfig`).
        crops: write classifier crops instead of detector scenes.
        real_root: folder with the shared photos; ``None`` = no real material (``cfg.real_frac``
            and ``cfg.real_bg_frac`` are then forced to 0).
        real_limit: read at most this many photos per source (tests).
        workers: processes (1 = in this process). Output does not depend on it.
        overwrite: replace an earlier output of this tool in ``out``.
        progress: show a tqdm progress bar on stderr.

    Raises:
        SynthError: bad settings, ``out`` not empty, or photos missing.
    """
    cfg = cfg or SynthConfig()
    if real_root is None:
        cfg = SynthConfig(**{**asdict(cfg), "real_frac": 0.0, "real_bg_frac": 0.0, "styles": tuple(cfg.styles),
                               "backgrounds": tuple(cfg.backgrounds)})
    cfg.check()
    if n < 1:
        raise SynthError(f"n must be >= 1, got {n}")
    if workers < 1:
        raise SynthError(f"workers must be >= 1, got {workers}")
    use_real = cfg.real_frac > 0 or cfg.real_bg_frac > 0
    root = str(real_root) if (use_real and real_root is not None) else None
    if root is not None:
        missing = [f"{name}/images/{split}" for name, split in REAL_SOURCES
                   if not (Path(root) / name / "images" / split).is_dir()]
        if missing:
            raise SynthError(f"real dice photos not found under {root}: {', '.join(missing)} "
                             "(use --real-frac 0 --real-bg-frac 0 to go without)")
    out = Path(out)
    _prepare_out(out, overwrite)
    # Written first: it marks the folder as ours, so an interrupted run can be redone with --overwrite.
    meta = {"tool": "kosti datasets synth", "seed": int(seed), "n": int(n), "crops": bool(crops),
            "config": {**asdict(cfg), "styles": list(cfg.styles), "backgrounds": list(cfg.backgrounds)},
            "real_sources": [f"{a}/{b}" for a, b in REAL_SOURCES] if use_real else []}
    (out / "synth.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")

    if crops:
        for split in ("train", "val"):
            for c in CROP_CLASSES:
                (out / split / c).mkdir(parents=True, exist_ok=True)
    else:
        for sub in ("images/train", "images/val", "labels/train", "labels/val"):
            (out / sub).mkdir(parents=True, exist_ok=True)

    summary = SynthSummary(out)
    summary.per_class = {c: 0 for c in CROP_CLASSES} if crops else {}
    from tqdm import tqdm

    bar = tqdm(total=n, unit="crop" if crops else "scene", file=sys.stderr, disable=not progress,
               desc="synth crops" if crops else "synth scenes")
    init_args = (cfg, int(seed), root, real_limit, crops)
    written = 0
    try:
        for _index, split, files in _run(init_args, workers, crops, n):
            if crops:
                files = files[: n - written]
            for rel, data in files:
                (out / rel).write_bytes(data)
                if crops:
                    summary.per_class[rel.split("/")[1]] += 1
                elif rel.endswith(".txt"):
                    summary.labels += data.count(b"\n")
            summary.scenes += 1
            step = len(files) if crops else 1
            summary.per_split[split] += step
            written += step
            bar.update(step)
            if written >= n:
                break
    finally:
        bar.close()

    if use_real:
        (out / "ATTRIBUTION.md").write_text(ATTRIBUTION)
    if not crops:
        names = {0: "die"} if cfg.classes == "die" else {k: str(k + 1) for k in range(6)}
        yaml_text = (
            f"# Synthetic dice scenes: kosti datasets synth --seed {seed} --n {n} --classes {cfg.classes}\n"
            "# Paths are relative to this file's folder (no 'path:' key, so Ultralytics resolves them here).\n"
            "train: images/train\nval: images/val\n"
            "names:\n" + "".join(f"  {k}: '{v}'\n" for k, v in names.items())
        )
        (out / "data.yaml").write_text(yaml_text)
    return summary


def _run(init_args: tuple, workers: int, crops: bool, n: int) -> Iterator[tuple[int, str, list]]:
    """Scenes in index order, from this process or a pool. In crops mode the caller stops early (every
    scene but an empty negative gives at least one crop, so 2n + 10 scenes are always enough)."""
    limit = 2 * n + 10 if crops else n
    indices = _count(limit)
    if workers == 1:
        _worker_init(*init_args)
        for i in indices:
            yield _work(i)
        return
    ctx = mp.get_context("spawn")
    with ctx.Pool(workers, initializer=_worker_init, initargs=init_args) as pool:
        yield from pool.imap(_work, indices, chunksize=4)


def _count(limit: int | None) -> Iterator[int]:
    i = 0
    while limit is None or i < limit:
        yield i
        i += 1


def _prepare_out(out: Path, overwrite: bool) -> None:
    if out.exists() and not out.is_dir():
        raise SynthError(f"{out} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()):
        if not overwrite:
            raise SynthError(f"{out} is not empty (pass --overwrite to replace an earlier synth output)")
        if not (out / "synth.json").is_file():
            raise SynthError(f"{out} was not made by kosti datasets synth (no synth.json); refusing to delete it")
        for name in ("images", "labels", "train", "val"):
            if (out / name).is_dir():
                shutil.rmtree(out / name)
        for name in ("data.yaml", "synth.json", "ATTRIBUTION.md"):
            (out / name).unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)
