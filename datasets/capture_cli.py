"""``kosti capture``: play, and save every settled throw with the faces the model proposes.

The command runs the live pipeline (source → settle → dice reader) and adds each settled throw to a
capture folder (:mod:`kosti.datasets.capture`: YOLO ``images/`` + ``labels/`` + ``review.json``) for
the dashboard's review page and ``kosti train --data DIR``. Photos of a folder source keep their file
names as image ids. Stop with Ctrl-C, ``--max`` or the end of a file source.
"""

from __future__ import annotations

import argparse
import json
import queue
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from kosti.datasets.capture import (
    CaptureError,
    CaptureWriter,
    list_ids,
    stats,
)
from kosti.vision.detections import Detections
from kosti.vision.params import STILL_S


class CaptureInputError(CaptureError):
    """Bad ``kosti capture`` arguments or source (exit code 2)."""


def default_capture_dir() -> Path:
    """Where ``kosti capture`` and the dashboard's review page keep captured throws unless told otherwise:
    ``storage.frames_dir`` of the kosti configuration (:attr:`kosti.config.StorageSettings.frames_path`;
    default ``$XDG_DATA_HOME/kosti/frames``, ``/var/lib/kosti/frames`` for the Raspberry Pi service).

    Raises:
        kosti.config.ConfigError: the configuration file is invalid (exit code 2).
    """
    from kosti.config import load_config

    return load_config().storage.frames_path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``kosti capture`` to the top-level parser."""
    p = subparsers.add_parser(
        "capture",
        help="save each settled throw with the faces the model proposes, for review and retraining",
        description="Run the live pipeline (source → settle → dice reader) and save every settled throw as a "
        "labelled image in a capture folder (YOLO images/ + labels/ + review.json). Review the labels on the "
        "dashboard's /review page, then fine-tune with `kosti train --data DIR`. Stop with Ctrl-C.",
    )
    p.add_argument("--source", required=True,
                   help="picamera, a device index (0), an rtsp:// or http:// URL, a video file, a folder of photos, virtual")
    p.add_argument("--rotate", type=int, default=None, choices=(0, 90, 180, 270), metavar="DEGREES",
                   help="turn every frame clockwise by 0, 90, 180 or 270 degrees, as `kosti run --rotate` (default: "
                   "source.rotate of the kosti config for a camera, 0 for files and folders)")
    p.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="capture folder, created or appended to (default: storage.frames_dir of the kosti config, "
                   "~/.local/share/kosti/frames)")
    p.add_argument("--still-time", type=float, default=STILL_S, metavar="SECONDS",
                   help=f"seconds the table must stay still before a throw counts as settled (default {STILL_S:g})")
    p.add_argument("--max", type=int, default=None, metavar="N", help="stop after N saved throws")
    p.add_argument("--model", type=Path, default=None, metavar="PATH",
                   help="detector (default: the active model version, see `kosti models list`)")
    p.add_argument("--cls-model", type=Path, default=None, metavar="PATH", help="face classifier (default: the active one)")
    p.add_argument("--dice", type=int, default=None, metavar="N",
                   help="dice expected per throw (throws with another count are saved but flagged)")
    p.add_argument("--ok-only", action="store_true", help="save only throws the pipeline read with confidence")
    p.add_argument("--realtime", action="store_true",
                   help="replay video files and photo folders at their own speed (default: as fast as possible)")
    p.add_argument("--json", action="store_true", help="print one JSON summary at the end instead of progress lines")
    p.set_defaults(func=run_capture)


def _open_reader(args: argparse.Namespace) -> tuple[Any, str]:
    """The dice reader and the model version string recorded with each image."""
    from kosti.registry import reader_files
    from kosti.vision.reader import DiceReader

    det, cls, version = reader_files(args.model, args.cls_model)
    reader = DiceReader(det_path=det, cls_path=cls)
    desc = reader.describe()
    return reader, (f"{version} ({desc})" if version != "custom" else desc)


def guess_faces(reader: Any, image: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Best-guess face (1–6) of each box even where the reader is unsure: the classifier's most probable
    face class (two-stage reader) or the six-class detector's class of the best-overlapping box.

    Args:
        reader: a :class:`kosti.vision.reader.DiceReader`. image: ``(H, W, 3)`` uint8 BGR.
        boxes: ``(K, 4)`` xyxy pixels.

    Returns:
        ``(K,)`` int64 faces, 0 where no guess can be made.
    """
    from kosti.vision.reader import face_values

    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    out = np.zeros(len(boxes), np.int64)
    if not len(boxes):
        return out
    try:
        exposed = getattr(reader, "exposed", None)  # DiceReader: the frame as read() sees it (a dim one brightened)
        image = exposed(image)[0] if exposed is not None else image
        if getattr(reader, "classifier", None) is not None:
            probs = np.asarray(reader.face_probs(reader.crops(image, boxes)), np.float64)
            values = face_values(reader.classifier.names)
            probs = np.where((values > 0)[None, :], probs, -1.0)
            best = probs.argmax(1)
            return np.where(probs[np.arange(len(boxes)), best] >= 0, values[best], 0).astype(np.int64)
        from kosti.vision.detections import box_iou

        xyxy, _, classes = reader.detect(image, conf=0.05)
        if len(xyxy):
            values = face_values(reader.detector.names)[np.asarray(classes, np.int64)]
            iou = box_iou(boxes, np.asarray(xyxy, np.float32))
            j = iou.argmax(1)
            return np.where(iou[np.arange(len(boxes)), j] >= 0.5, values[j], 0).astype(np.int64)
    except Exception:  # noqa: BLE001, S110 - a guess is optional; the image stays unreviewed anyway
        pass
    return out


def throw_dice(throw: Any, reader: Any = None) -> Detections:
    """Dice of a pipeline :class:`~kosti.vision.pipeline.Throw` (roll area, then set-aside dice: every die
    on the frame is labelled) as one :class:`~kosti.vision.detections.Detections` for
    :meth:`~kosti.datasets.capture.CaptureWriter.add`, with a ``guess`` column: an uncertain die's vote
    guess, else :func:`guess_faces` from ``reader`` (0 where there is none).

    Args:
        throw: a settled throw (``dice`` and ``set_aside`` lists of dice, ``image`` BGR or ``None``).
        reader: the dice reader asked for guesses, or ``None``.
    """
    dets = Detections.concat([Detections.from_dice(throw.dice),
                              Detections.from_dice(list(getattr(throw, "set_aside", []) or []))])
    guess = dets.column("guess").astype(np.int64)
    guess[(guess < 1) | (guess > 6)] = 0
    need = np.flatnonzero(dets.uncertain & (guess == 0))
    if len(need) and reader is not None and throw.image is not None:
        guess[need] = guess_faces(reader, throw.image, dets.xyxy[need])
    return dets.with_data(guess=guess)


def _faces_text(dice: Detections) -> str:
    return " ".join(str(v) if v else (f"{g}?" if g else "?")
                    for v, g in zip(dice.value.tolist(), dice.column("guess").tolist())) or "-"


def source_photo(source: Any, frame_index: int) -> Path | None:
    """The photo file a folder source (:class:`kosti.sim.replay.FolderSource`) showed at ``frame_index``;
    ``None`` for cameras, videos and the virtual table, or during a transition."""
    photo_at = getattr(source, "photo_at", None)
    if photo_at is None or not getattr(source, "files", None):
        return None
    i = photo_at(frame_index)
    return None if i is None else Path(source.files[i])


def _free_id(root: Path, photo: Path | None) -> str | None:
    """An unused image id named after ``photo``'s file name (``IMG_0042.jpg`` → ``IMG_0042``; ``-2``, ``-3``…
    when taken; characters outside ``A–Z a–z 0–9 . _ -`` become ``_``), or ``None`` (a time-stamped id)."""
    if photo is None:
        return None
    base = re.sub(r"[^A-Za-z0-9._-]", "_", photo.stem).lstrip("._-")[:120] or "photo"
    taken = set(list_ids(root))
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    return name


def _rotation(args: argparse.Namespace) -> int:
    """Degrees clockwise to turn ``kosti capture``'s frames: ``--rotate``, else the kosti config's ``source.rotate``
    for a live camera (the table's camera as ``kosti run`` turns it, so the dice taught are seen as they will be
    read), else 0. Raises :class:`kosti.config.ConfigError` for an invalid config file (exit code 2)."""
    if args.rotate is not None:
        return int(args.rotate)  # open_source refuses a turn of the virtual table
    from kosti.vision.sources import SourceError, parse_source_spec

    try:
        if parse_source_spec(args.source).kind not in ("picamera", "device", "url"):
            return 0
    except SourceError:
        return 0  # open_source says why the source is unusable
    from kosti.config import load_config

    return int(load_config().source.rotate)


def run_capture(args: argparse.Namespace) -> int:
    """Handler of ``kosti capture``: returns 0 when stopped by ``--max``, the end of a file source or Ctrl-C.

    Raises:
        CaptureInputError: bad arguments or source (exit code 2); ModelLoadError: no usable model (exit 2).
    """
    from kosti.vision.orientation import OrientationCheck
    from kosti.vision.pipeline import LivePipeline
    from kosti.vision.settle import SettleDetector
    from kosti.vision.sources import SourceError, open_source
    from kosti.vision.throw_detector import reader_dim_gain

    if args.max is not None and args.max < 1:
        raise CaptureInputError("--max must be >= 1")
    if not 0 < args.still_time <= 10:
        raise CaptureInputError("--still-time must be in (0, 10] seconds")
    if args.dice is not None and args.dice < 1:
        raise CaptureInputError("--dice must be >= 1")
    from kosti.common.writable import writable_dir

    # checked now, created by the capture writer once the reader has loaded (nothing is left behind before)
    out = writable_dir(args.out or default_capture_dir(), "--out folder" if args.out else "capture folder",
                       create=False)
    from kosti.vision.camera_probe import probe_camera, quiet_native_camera_logs

    try:
        source = open_source(args.source, realtime=args.realtime, photos=True,  # a folder holds photos you have
                             rotate=_rotation(args))
        probe_camera(args.source)  # a camera that can never come (no picamera2, no such device): one line, exit 2
    except SourceError as exc:
        raise CaptureInputError(str(exc)) from None
    quiet_native_camera_logs()
    reader, model = _open_reader(args)
    writer = CaptureWriter(out, model=model)
    throws: queue.Queue[Any] = queue.Queue()
    pipe = LivePipeline(source, reader, settle=SettleDetector(still_s=args.still_time, dim_gain=reader_dim_gain(reader)),
                        expected_dice=args.dice)
    pipe.subscribe(throws.put)
    saved: list[str] = []
    skipped = 0
    say = (lambda *a, **k: None) if args.json else print
    say(f"capturing from {args.source} into {out} (model {model}); Ctrl-C stops", flush=True)
    t0 = time.monotonic()
    orientation = OrientationCheck()  # a picture the wrong way up would teach side faces (kosti.vision.orientation)
    turn_hint: int | None = None
    pipe.start()
    interrupted = False
    try:
        while args.max is None or len(saved) < args.max:
            try:
                throw = throws.get(timeout=0.25)
            except queue.Empty:
                if pipe.wait(0) and throws.empty():
                    break  # a finite source (file, folder) has ended
                continue
            if args.ok_only and not throw.ok:
                skipped += 1
                continue
            dice = throw_dice(throw, reader)
            photo = source_photo(source, int(throw.frame_index))
            try:
                image_id = writer.add(throw.image, dice, source="capture", image_id=_free_id(out, photo), extra={
                    "frame": int(throw.frame_index), "time_s": round(float(throw.time_s), 3), "status": throw.status,
                    "reasons": list(getattr(throw, "reason_codes", []) or []), "source": str(args.source),
                    **({"source_file": photo.name} if photo is not None else {})})
            except CaptureError as exc:
                skipped += 1
                print(f"kosti capture: throw at frame {throw.frame_index} not saved: {exc}", file=sys.stderr)
                continue
            saved.append(image_id)
            codes = list(dict.fromkeys(getattr(throw, "reason_codes", []) or []))
            flag = f" ({', '.join(codes)})" if codes else ""
            say(f"[{len(saved)}] {image_id}  faces {_faces_text(dice)}  {throw.status}{flag}", flush=True)
            if orientation.add_throw(throw) and turn_hint is None:
                turn_hint = orientation.rotate_for(source.rotation)
                if turn_hint is not None:
                    print(f"kosti capture: the dice look larger towards the top or a side of the picture: the camera "
                          f"seems turned, and dice seen at an angle would be taught by a side face; stop and run "
                          f"again with --rotate {turn_hint} (or set source.rotate = {turn_hint})", file=sys.stderr,
                          flush=True)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        pipe.stop()
    st = stats(out)
    summary = {"out": str(out), "saved": len(saved), "ids": saved, "skipped": skipped,
               "frames": source.frames_read, "seconds": round(time.monotonic() - t0, 1),
               "interrupted": interrupted, "model": model, "stats": st, "turn_hint": turn_hint}
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
    else:
        print(f"saved {len(saved)} throws to {out}: {st['images']} images, {st['reviewed']} reviewed, "
              f"{st['dice']} dice. Review them at /review on a dashboard started with --review-dir {out}, then `kosti train --data {out}`.")
    return 0


__all__ = ["CaptureInputError", "guess_faces", "register", "run_capture", "source_photo", "throw_dice"]
