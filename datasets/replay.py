"""The replay set that ships with kosti (``datasets/replay_set/``, built by ``scripts/build_replay.py``).

Real labelled photos from byler-d6 (BSD 3-Clause) and rune55 (CC BY 4.0), with their licence notices, in
two parts that never share a photo:

* :data:`REPLAY_TRAIN` — replayed by ``kosti train`` with a user's own photos, so a fine-tuned reader does
  not forget ordinary dice (no ``--base-data`` needed, nothing to download: it is in the package);
* :data:`REFERENCE` — never trained on; every model version is measured on it with
  :func:`reference_metrics`, so ``kosti models list`` compares all versions on the same photos, and
  ``kosti train``'s gate refuses a version that reads them worse.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

#: Folder of the shipped replay set.
REPLAY_DIR = Path(__file__).resolve().parent / "replay_set"
#: ``(dataset, split)`` of the replay photos (a YOLO folder with ``images/`` and ``labels/``).
REPLAY_TRAIN: tuple[Path, str] = (REPLAY_DIR / "train", "train")
#: ``(dataset, split)`` of the reference photos.
REFERENCE: tuple[Path, str] = (REPLAY_DIR / "reference", "train")
#: Metrics kept for the reference set (``kosti eval`` keys; mAP is not measured here: it needs a second
#: detector pass at confidence 0.001 and no decision uses it).
REFERENCE_KEYS = ("images", "dice", "precision", "recall", "die_accuracy", "image_exact")
#: Name of the per-registry cache of reference metrics, keyed by the model files' SHA-256.
CACHE_NAME = "reference_metrics.json"


def reference_id() -> str:
    """Short id of the reference set's content (SHA-256 of its label files, 12 hex digits): the ``data``
    key of reference metrics, so numbers measured on another build of the set never compare."""
    h = hashlib.sha256()
    for f in sorted((REFERENCE[0] / "labels").glob("*.txt")):
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return "kosti-reference:" + h.hexdigest()[:12]


def _files_key(detector: Path, classifier: Path) -> str:
    h = hashlib.sha256()
    reader_json = Path(classifier).parent / "reader.json"
    for f in (Path(detector), Path(classifier), reader_json):
        h.update(f.read_bytes() if f.is_file() else b"-")
    return h.hexdigest()


def reference_metrics(detector: str | os.PathLike[str], classifier: str | os.PathLike[str],
                      cache_dir: str | os.PathLike[str] | None = None, **reader_kwargs: Any) -> dict[str, Any]:
    """The reader (``detector`` + ``classifier``, with the ``reader.json`` beside the classifier) measured on
    :data:`REFERENCE` at its default operating point (:mod:`kosti.models`).

    Args:
        detector, classifier: ONNX files. cache_dir: folder of a JSON cache keyed by the files' SHA-256
            (the registry root); ``None`` = no cache. reader_kwargs: more :class:`DiceReader` arguments.

    Returns:
        ``{"data": reference_id(), "images", "dice", "precision", "recall", "die_accuracy", "image_exact"}``.

    Raises:
        ModelLoadError, DatasetError: as :func:`kosti.vision.evaluate.evaluate_data` (exit code 2).
    """
    from kosti.vision.evaluate import evaluate_data

    key = _files_key(Path(detector), Path(classifier)) if cache_dir is not None and not reader_kwargs else None
    cache_file = Path(cache_dir) / CACHE_NAME if key else None
    data_id = reference_id()
    cache: dict[str, Any] = {}
    if cache_file is not None and cache_file.is_file():
        try:
            cache = json.loads(cache_file.read_text())
        except ValueError:
            cache = {}
        hit = cache.get(key) if isinstance(cache, dict) else None
        if isinstance(hit, dict) and hit.get("data") == data_id:
            return hit
    doc = evaluate_data(REFERENCE[0], split=REFERENCE[1], detector=detector, classifier=classifier,
                        compute_map=False, **reader_kwargs)
    out = {"data": data_id, **{k: doc[k] for k in REFERENCE_KEYS}}
    if cache_file is not None:
        cache[key] = out
        try:
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache_file.with_suffix(".tmp")
            tmp.write_text(json.dumps(cache, indent=1) + "\n")
            tmp.replace(cache_file)
        except OSError:  # a read-only registry still gets the numbers, just not cached
            pass
    return out


__all__ = ["CACHE_NAME", "REFERENCE", "REFERENCE_KEYS", "REPLAY_DIR", "REPLAY_TRAIN", "reference_id",
           "reference_metrics"]
