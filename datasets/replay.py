"""The replay set of ``kosti train``: real labelled photos read from the shared data sets, never copied.

``datasets/replay_set/manifest.json`` (built by ``scripts/build_replay.py``) names photos of byler-d6
(BSD 3-Clause) and rune55 (CC BY 4.0) in two parts that never share a photo:

* :func:`replay_train` — replayed by ``kosti train`` with a user's own photos, so a fine-tuned reader does
  not forget ordinary dice (no ``--base-data`` needed);
* :func:`reference` — never trained on; every model version is measured on it with
  :func:`reference_metrics`, so ``kosti models list`` compares all versions on the same photos, and
  ``kosti train``'s gate refuses a version that reads them worse.

The photos stay in the shared data sets (:func:`shared_root`: ``$KOSTI_SHARED_DATASETS``, else
``../shared/datasets`` beside the project); a part is linked into a YOLO folder under the user's cache
(``$XDG_CACHE_HOME/kosti/replay``) the first time it is used. Where the shared sets are missing the part
raises :class:`ReplayUnavailable` (exit code 2) naming the first missing file.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from kosti.vision.evaluate import DatasetError

#: Folder of the replay set's manifest (and its README).
REPLAY_DIR = Path(__file__).resolve().parent / "replay_set"
#: The manifest: ``{"tags": {set: file-name prefix}, "train": [[set, split, image name], …], "reference": …}``.
MANIFEST = REPLAY_DIR / "manifest.json"
#: Metrics kept for the reference set (``kosti eval`` keys; mAP is not measured here: it needs a second
#: detector pass at confidence 0.001 and no decision uses it).
REFERENCE_KEYS = ("images", "dice", "precision", "recall", "die_accuracy", "image_exact")
#: Name of the per-registry cache of reference metrics, keyed by the model files' SHA-256.
CACHE_NAME = "reference_metrics.json"


class ReplayUnavailable(DatasetError):
    """A photo the replay manifest names is not in the shared data sets (CLI exit code 2)."""


def shared_root() -> Path:
    """Folder of the shared data sets: ``$KOSTI_SHARED_DATASETS``, else ``../shared/datasets`` beside the
    project folder."""
    env = os.environ.get("KOSTI_SHARED_DATASETS")
    return Path(env).expanduser() if env else REPLAY_DIR.parents[2] / "shared" / "datasets"


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "kosti" / "replay"


def _part(name: str) -> tuple[Path, str]:
    """The manifest's part ``name`` as a ``(YOLO folder, split)`` of links into :func:`shared_root`; the
    links are ``<tag>__<image name>`` with their labels. Raises :class:`ReplayUnavailable`."""
    manifest = json.loads(MANIFEST.read_text())
    root = shared_root()
    rows = [(root / ds / "images" / split / img, root / ds / "labels" / split / f"{Path(img).stem}.txt",
             f"{manifest['tags'][ds]}__{img}") for ds, split, img in manifest[name]]
    for src in (f for row in rows for f in row[:2]):
        if not src.is_file():
            raise ReplayUnavailable(f"the replay photos are read from the shared data sets and {src} is missing "
                                    f"(set KOSTI_SHARED_DATASETS to the folder holding byler-d6 and rune55-dedup)")
    key = hashlib.sha256(f"{root.resolve()}\n{json.dumps(manifest[name])}".encode()).hexdigest()[:12]
    folder = _cache_root() / f"{name}-{key}"
    if not (folder / "complete").is_file():
        for sub in ("images", "labels"):
            (folder / sub).mkdir(parents=True, exist_ok=True)
        for img, label, link in rows:
            for src, dest in ((img, folder / "images" / link),
                              (label, folder / "labels" / f"{Path(link).stem}.txt")):
                if not dest.is_symlink():
                    dest.symlink_to(src.resolve())
        (folder / "complete").write_text("")
    return folder, "train"


def replay_train() -> tuple[Path, str]:
    """``(dataset, split)`` of the replay photos (a YOLO folder with ``images/`` and ``labels/``)."""
    return _part("train")


def reference() -> tuple[Path, str]:
    """``(dataset, split)`` of the reference photos (never trained on)."""
    return _part("reference")


def reference_id() -> str:
    """Short id of the reference set's content (SHA-256 of its label files, 12 hex digits): the ``data``
    key of reference metrics, so numbers measured on another build of the set never compare."""
    h = hashlib.sha256()
    for f in sorted((reference()[0] / "labels").glob("*.txt")):
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return "kosti-reference:" + h.hexdigest()[:12]


def _files_key(detector: Path, classifier: Path) -> str:
    """Cache key of a reader's reference numbers: its files, the ``reader.json`` beside the classifier and the
    reader's default operating point (:class:`kosti.vision.params.ReaderParams`' defaults, thresholds and zoom: an update that changes them,
    as v1.1 did, must not serve the numbers measured at the old ones)."""
    import dataclasses

    from kosti.models import (
        DEFAULT_ZOOM_BELOW,
        DEFAULT_ZOOM_IMGSZ,
        DEFAULT_ZOOM_MAX,
        ZOOM_DIE_SIDE,
        ZOOM_LARGE_FRAME_QUANTILE,
        ZOOM_STEP,
    )
    from kosti.vision.crops import VIEW_COUNTS
    from kosti.vision.exposure import BRIGHT_SHARE, EXPOSURE_TARGET, MAX_EXPOSURE_GAIN, PROBE_SIDE
    from kosti.vision.params import ReaderParams
    from kosti.vision.reader import ZOOM_SAME_DIE_IOU

    h = hashlib.sha256()
    reader_json = Path(classifier).parent / "reader.json"
    for f in (Path(detector), Path(classifier), reader_json):
        h.update(f.read_bytes() if f.is_file() else b"-")
    # the reader's settings are declared once, in ReaderParams (issue 39): its defaults are the operating point
    defaults: dict[str, object] = {k: v for k, v in dataclasses.asdict(ReaderParams()).items()
                                   if isinstance(v, (int, float, bool))}
    defaults["tta_views"] = VIEW_COUNTS  # the views themselves are in reader.json (hashed above)
    # DiceReader's zoom None = these; merged with the first read since 2026-12-03 (ZOOM_SAME_DIE_IOU)
    # the zoom's side and its trigger on a large frame follow the dice since 2026-12-04
    defaults["zoom"] = [DEFAULT_ZOOM_BELOW, DEFAULT_ZOOM_IMGSZ, ZOOM_SAME_DIE_IOU, DEFAULT_ZOOM_MAX, ZOOM_DIE_SIDE,
                        ZOOM_STEP, ZOOM_LARGE_FRAME_QUANTILE]
    # how a dim frame is measured and brightened (DiceReader's dim_gain)
    defaults["exposure"] = [EXPOSURE_TARGET, MAX_EXPOSURE_GAIN, PROBE_SIDE, BRIGHT_SHARE]
    h.update(json.dumps(defaults, sort_keys=True).encode())
    return h.hexdigest()


def reference_metrics(detector: str | os.PathLike[str], classifier: str | os.PathLike[str],
                      cache_dir: str | os.PathLike[str] | None = None,
                      progress: Callable[[Iterable[Any]], Iterable[Any]] | None = None,
                      **reader_kwargs: Any) -> dict[str, Any]:
    """The reader (``detector`` + ``classifier``, with the ``reader.json`` beside the classifier) measured on
    :func:`reference` at its default operating point (:mod:`kosti.models`).

    Args:
        detector, classifier: ONNX files. cache_dir: folder of a JSON cache keyed by the files' SHA-256
            (the registry root); ``None`` = no cache. progress: wraps the photos' iterable when they are
            read (not on a cache hit; ``kosti models list`` tells the user about the wait). reader_kwargs:
            more :class:`DiceReader` arguments.

    Returns:
        ``{"data": reference_id(), "images", "dice", "precision", "recall", "die_accuracy", "image_exact"}``.

    Raises:
        ModelLoadError, DatasetError: as :func:`kosti.vision.evaluate.evaluate_data` (exit code 2);
            :class:`ReplayUnavailable` (a DatasetError) when the shared data sets are missing.
    """
    from kosti.vision.evaluate import evaluate_data

    key = _files_key(Path(detector), Path(classifier)) if cache_dir is not None and not reader_kwargs else None
    cache_file = Path(cache_dir) / CACHE_NAME if key and cache_dir is not None else None
    data_id = reference_id()
    cache: dict[str, Any] = {}
    if cache_file is not None and key is not None and cache_file.is_file():
        try:
            cache = json.loads(cache_file.read_text())
        except ValueError:
            cache = {}
        hit = cache.get(key) if isinstance(cache, dict) else None
        if isinstance(hit, dict) and hit.get("data") == data_id:
            return hit
    ref_dir, ref_split = reference()
    doc = evaluate_data(ref_dir, split=ref_split, detector=Path(detector), classifier=Path(classifier),
                        compute_map=False, progress=progress, **reader_kwargs)
    out = {"data": data_id, **{k: doc[k] for k in REFERENCE_KEYS}}
    if cache_file is not None and key is not None:
        cache[key] = out
        try:
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache_file.with_suffix(".tmp")
            tmp.write_text(json.dumps(cache, indent=1) + "\n")
            tmp.replace(cache_file)
        except OSError:  # a read-only registry still gets the numbers, just not cached
            pass
    return out


__all__ = ["CACHE_NAME", "MANIFEST", "REFERENCE_KEYS", "REPLAY_DIR", "ReplayUnavailable", "reference",
           "reference_id", "reference_metrics", "replay_train", "shared_root"]
