"""Keep part of the shipped face classifier: mix its weights with the fine-tuned ones (issue 41).

A classifier fine-tuned on a table's own dice (a skull for 1, numerals) learns them in an epoch or two, but
every step also moves the weights that read the pip dice of other tables: with the replay set and half the
learning rate, reader v1.3's die accuracy on the reference photos still fell 0.954 → 0.945 (skull/emblem) and
0.954 → 0.944 (numerals), twice the 0.005 the gate allows (docs/retraining.md).

Averaging the weights of the model before and after fine-tuning, ``share · tuned + (1 − share) · base``,
keeps most of what the fine-tune learnt and most of what the base knew, because both models lie in one
basin of the loss (Wortsman et al., "Robust fine-tuning of zero-shot models", CVPR 2022: WiSE-FT; the
same weight averaging as "model soups"). Measured on the skull/emblem proof (reader v1.3, the fine-tune of
5 epochs at lr 0.0005): share 1.0 → reference die accuracy 0.945, new dice 1.000; share 0.7 → reference
0.954 (the base's own), new dice 1.000 on 50 unseen throws; share 0.5 → reference 0.959, new dice 0.947.

:func:`choose_share` takes the smallest share (most of the base kept) whose accuracy on the user's own
validation crops is as good as the plain fine-tune's, so the table's dice decide how much is needed and the
reference photos stay the gate's, never trained or tuned on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: Shares of the fine-tuned weights tried by :func:`choose_share`, smallest first (1.0 = the fine-tune alone).
SHARES = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
#: A mix "reads the table's dice as well as the fine-tune" when its top-1 accuracy on their validation crops
#: is at most this much below the fine-tune's (one crop in 500; the crops are cut from the training photos,
#: so the fine-tune itself reads nearly all of them) — or one crop, on fewer than 500 crops
#: (:func:`share_tolerance`).
SHARE_TOLERANCE = 0.002
#: Name of the record of the choice, beside the mixed weights.
CHOICE_JSON = "mix.json"


def mix_weights(base_pt: Path, tuned_pt: Path, share: float, out_pt: Path) -> Path:
    """Write ``out_pt``: the Ultralytics checkpoint ``tuned_pt`` with every floating-point tensor replaced by
    ``share · tuned + (1 − share) · base`` (batch-norm statistics included; integer buffers kept from the
    tuned model). The EMA and optimizer state are dropped (the export reads ``model``).

    Args:
        base_pt: the checkpoint fine-tuning started from (same architecture and class names).
        tuned_pt: the fine-tuned checkpoint. share: 0–1, weight of the fine-tuned tensors.
        out_pt: where to write the mixed checkpoint (its folder is created).

    Returns:
        ``out_pt``.

    Raises:
        ValueError: ``share`` outside 0–1, or the two checkpoints differ in tensors or class names.
        OSError / what ``torch.load`` raises for a missing or unreadable file.
    """
    import torch

    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must be in [0, 1], got {share}")
    base = torch.load(base_pt, map_location="cpu", weights_only=False)
    tuned = torch.load(tuned_pt, map_location="cpu", weights_only=False)
    b_model, t_model = base.get("ema") or base["model"], tuned.get("ema") or tuned["model"]
    if getattr(b_model, "names", None) != getattr(t_model, "names", None):
        raise ValueError(f"{base_pt} and {tuned_pt} name different classes: "
                         f"{getattr(b_model, 'names', None)} vs {getattr(t_model, 'names', None)}")
    b_sd, t_sd = b_model.state_dict(), t_model.state_dict()
    if b_sd.keys() != t_sd.keys() or any(b_sd[k].shape != t_sd[k].shape for k in t_sd):
        raise ValueError(f"{base_pt} and {tuned_pt} are not the same network")
    mixed = {k: (share * v.float() + (1.0 - share) * b_sd[k].float()).to(v.dtype) if v.is_floating_point() else v
             for k, v in t_sd.items()}
    t_model.load_state_dict(mixed)
    tuned["model"], tuned["ema"], tuned["optimizer"] = t_model, None, None
    out_pt.parent.mkdir(parents=True, exist_ok=True)
    torch.save(tuned, out_pt)
    return out_pt


def crop_accuracy(pt: Path, cls_root: Path, split: str = "val") -> float:
    """Top-1 accuracy (0–1) of the classifier checkpoint ``pt`` on the ImageFolder split ``cls_root/split``
    (the crops :func:`kosti.datasets.prepare.prepare_classification` cut), by Ultralytics' validator at the
    classifier's 64-px input. Raises what Ultralytics raises for a missing split."""
    from kosti.datasets.train import CLS_IMGSZ, _yolo_class

    metrics = _yolo_class()(str(pt)).val(data=str(cls_root), split=split, imgsz=CLS_IMGSZ, batch=128, device="cpu",
                                         plots=False, verbose=False, workers=0)
    return float(metrics.top1)


def share_tolerance(n_crops: int, tolerance: float = SHARE_TOLERANCE) -> float:
    """How far below the fine-tune's top-1 accuracy a mix may read ``n_crops`` validation crops: ``tolerance``,
    or one crop (``1 / n_crops``) when that is more.

    A teach session of 20 throws gives about 70 crops, where one crop is 0.014: with 0.002 alone, a mix that
    misread one crop more than the fine-tune (noise, on 70) was refused, the fine-tune alone was exported and it
    forgot the pip dice of other tables (reader v1.3, 8 epochs on 10 training photos of numeral dice: reference
    die accuracy 0.954 → 0.930, refused by the gate), while the 0.70 mix read 69 of the 70 crops and kept the
    reference (activated). On the proofs' 560 crops the rule is 0.002 as before.

    Raises:
        ValueError: ``n_crops`` < 1.
    """
    if n_crops < 1:
        raise ValueError(f"no validation crops to choose a share on (n_crops={n_crops})")
    return max(tolerance, 1.0 / n_crops)


def _count_crops(folder: Path) -> int:
    """Image files under an ImageFolder split (one sub-folder per class)."""
    from kosti.vision.image_files import is_image_name

    return sum(1 for f in folder.rglob("*") if is_image_name(f))


def choose_share(base_pt: Path, tuned_pt: Path, cls_root: Path, out_dir: Path,
                 shares: Sequence[float] = SHARES, tolerance: float = SHARE_TOLERANCE) -> tuple[Path, dict[str, Any]]:
    """The mix of ``base_pt`` and ``tuned_pt`` that keeps the most of the base while reading the table's
    validation crops (``cls_root/val``) as well as the fine-tune: the smallest share of :data:`SHARES` whose
    top-1 accuracy there is at least the fine-tune's minus :func:`share_tolerance` (``tolerance`` or one crop).

    Returns:
        ``(checkpoint, record)``: the mixed checkpoint under ``out_dir`` (``tuned_pt`` itself when the share is
        1.0) and ``{"share", "accuracy": {share: top-1}, "tolerance", "crops"}``, also written to
        ``out_dir/mix.json``.

    Raises:
        ValueError: as :func:`mix_weights`, or an empty validation split; what Ultralytics raises for a missing one.
    """
    n_crops = _count_crops(cls_root / "val")
    tolerance = share_tolerance(n_crops, tolerance)
    shares = sorted(set(shares) | {1.0})
    full = crop_accuracy(tuned_pt, cls_root)
    accuracy = {1.0: full}
    chosen, chosen_pt = 1.0, tuned_pt
    for share in shares[:-1]:
        pt = mix_weights(base_pt, tuned_pt, share, out_dir / f"mix_{share:.2f}.pt")
        accuracy[share] = crop_accuracy(pt, cls_root)
        if accuracy[share] >= full - tolerance - 1e-6:  # 69/70 against 1 - 1/70: Ultralytics gives float32
            chosen, chosen_pt = share, pt
            break
    record = {"share": chosen, "accuracy": {f"{s:.2f}": round(a, 6) for s, a in sorted(accuracy.items())},
              "tolerance": round(tolerance, 5), "crops": n_crops}
    (out_dir / CHOICE_JSON).write_text(json.dumps(record, indent=1) + "\n")
    for f in out_dir.glob("mix_*.pt"):  # only the chosen mix is kept
        if f != chosen_pt:
            f.unlink()
    return chosen_pt, record


__all__ = ["CHOICE_JSON", "SHARES", "SHARE_TOLERANCE", "choose_share", "crop_accuracy", "mix_weights",
           "share_tolerance"]
