"""``kosti read``, ``kosti eval`` and ``kosti export`` (contracts in ``../shared/docs/cli.md``).

* ``kosti read [--model PATH] [--conf FLOAT] [--json] IMAGE [IMAGE ...]`` — dice in photos.
* ``kosti eval --data PATH [--split test|val|train] [--model PATH] [--json] [--plots DIR]`` — reader
  metrics on a labelled YOLO dataset.
* ``kosti export WEIGHTS.pt [--format onnx|ncnn]`` — turn trained Ultralytics weights into runtime models.

``--model`` is the detector; ``--cls-model`` the face classifier. With neither, both come from the model
registry's active version (``kosti models use``; :func:`kosti.registry.reader_files`); with ``--model``
alone the classifier is the shipped one (none when the detector has six classes). ``--backend ncnn`` reads
NCNN export folders with the ``ncnn`` package alone (no torch); ``.pt`` files run through Ultralytics.
Errors with an ``exit_code`` (unreadable image, missing model, bad dataset) become exit 2 in the
dispatcher (``kosti/cli.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kosti.engine.plurals import count
from kosti.vision.params import BACKEND_NAMES, ReaderParams, add_setting_flags, params_from_args

if TYPE_CHECKING:
    from kosti.vision.evaluate import Dataset
    from kosti.vision.reader import DiceReader


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be ≥ 1, got {v}")
    return v


def _add_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", type=Path, default=None, metavar="PATH",
                   help="detector (.onnx, an NCNN export folder or .pt; default: the active model version, "
                        "see `kosti models list`)")
    p.add_argument("--cls-model", type=Path, default=None, metavar="PATH",
                   help="face classifier (default: the active version's; with --model alone: models/dice_cls.onnx, "
                        "none for a six-class detector)")
    add_setting_flags(p, ReaderParams)  # --conf … --zoom-max, --no-tta, --threads: one flag per declared setting
    p.add_argument("--backend", choices=list(BACKEND_NAMES), default=None,
                   help="inference runtime: onnx (ONNX Runtime), ncnn (the ncnn package, for the Raspberry Pi) or "
                        "ultralytics (.pt); auto: by the model path (.onnx → onnx, an NCNN export folder → ncnn, "
                        "else ultralytics). Default: reader.backend of the config file when there is one, else onnx "
                        "(auto when --model is given)")


def _models(args: argparse.Namespace) -> tuple[str, Path | None, Path | None]:
    """``(backend, detector, classifier)`` for ``read``/``eval`` (``../shared/docs/cli.md``).

    No ``--backend``: the config file's ``reader.backend`` when a config file exists
    (:func:`kosti.config.default_config_path`), else ``onnx`` — ``auto`` when ``--model`` names a file.
    No ``--model``/``--cls-model``: the active model version's files for that backend (``kosti models
    use``; the shipped models while none was chosen). Raises ``ConfigError``/``RegistryError`` (exit 2).
    """
    backend = args.backend
    if backend is None:
        if args.model is not None:
            backend = "auto"
        else:
            from kosti.config import default_config_path, load_config

            backend = load_config().reader.backend if default_config_path().is_file() else "onnx"
    if backend == "auto":
        return backend, args.model, args.cls_model
    from kosti.registry import reader_files

    det, cls, _version = reader_files(args.model, args.cls_model, backend=backend)
    return backend, det, cls


def _reader(args: argparse.Namespace) -> DiceReader:
    """The reader of ``read`` / ``eval``: the registry's active version unless ``--model`` / ``--cls-model``."""
    from kosti.vision.reader import DiceReader

    backend, det, cls = _models(args)
    return DiceReader(det, cls, params_from_args(ReaderParams, args, backend=backend))


def _progress(total: int, desc: str) -> Callable[[Iterable[Any]], Iterable[Any]]:
    """tqdm wrapper on stderr; silent when stderr is not a terminal or for a handful of items."""
    from tqdm import tqdm

    def wrap(it: Iterable[Any]) -> Iterable[Any]:
        return tqdm(it, total=total, desc=desc, file=sys.stderr, leave=False,
                    disable=None if total > 3 else True, unit="img")

    return wrap


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``read``, ``eval`` and ``export`` to the ``kosti`` command line."""
    p = subparsers.add_parser("read", help="read the dice in photos",
                              description="Find every die in each photo and read the face it shows.")
    _add_model_args(p)
    p.add_argument("--keep-going", action="store_true",
                   help="read the other images when one is unreadable (exit code is still 2)")
    p.add_argument("--json", action="store_true", help="print one JSON document (cli.md)")
    p.add_argument("images", nargs="+", metavar="IMAGE")
    p.set_defaults(func=cmd_read)

    p = subparsers.add_parser("eval", help="measure the reader on a labelled YOLO dataset",
                              description="Precision, recall, face accuracy, mAP and speed on a YOLO dataset.")
    p.add_argument("--data", required=True, type=Path, metavar="PATH",
                   help="data.yaml, or a folder with images/ and labels/")
    p.add_argument("--split", choices=["test", "val", "train"], default="test")
    _add_model_args(p)
    p.add_argument("--no-map", action="store_true",
                   help="skip the low-threshold detector pass for mAP (faster; mAP then underestimated)")
    p.add_argument("--plots", type=Path, default=None, metavar="DIR",
                   help="write confusion_matrix.png, errors/*.png (the photos with most mistakes) and "
                        "dice/sheet_NN.png with dice/dice.csv (every die not read right, cropped) there")
    p.add_argument("--fit-temperature", type=Path, default=None, metavar="OUT.json",
                   help="also fit the face classifier's softmax temperature on this split and write "
                        "{\"temperature\": T, \"views\": …, ...} there (use as reader.json beside the classifier)")
    p.add_argument("--json", action="store_true", help="print one JSON document (cli.md)")
    p.set_defaults(func=cmd_eval)

    p = subparsers.add_parser("export", help="export Ultralytics .pt weights to ONNX or NCNN",
                              description="Export trained weights for the runtime (ONNX) or the Pi (NCNN).")
    p.add_argument("weights", type=Path, metavar="WEIGHTS.pt")
    p.add_argument("--format", choices=["onnx", "ncnn"], default="onnx")
    p.add_argument("--imgsz", type=_positive_int, default=None, help="input size (default: training size)")
    p.add_argument("--int8-weights", type=Path, default=None, metavar="INT8.onnx",
                   help="with --format ncnn: write into the NCNN folder the weights of the INT8 ONNX file quantised "
                        "from the same weights (the shipped reader's), so the Pi's NCNN reader reads as it does "
                        "(kosti.datasets.ncnn_weights)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_export)


def cmd_read(args: argparse.Namespace) -> int:
    """``kosti read``: print the dice of each image; exit 2 if any image was unreadable."""
    from kosti.vision.reader import ImageReadError, load_image

    reader = _reader(args)
    results, failed = [], 0
    for name in _progress(len(args.images), "read")(args.images):
        try:
            img = load_image(name)
        except ImageReadError as exc:
            if not args.keep_going:
                raise
            failed += 1
            print(f"kosti read: {exc}", file=sys.stderr)
            results.append({"image": name, "error": str(exc)})
            continue
        t0 = time.perf_counter()
        det = reader.read(img)
        ms = (time.perf_counter() - t0) * 1e3
        results.append({"image": name, "width": int(img.shape[1]), "height": int(img.shape[0]),
                        "ms": round(ms, 1), "dice": det.to_dicts()})
    if args.json:
        print(json.dumps(results, ensure_ascii=False))
    else:
        for r in results:
            if "error" in r:
                print(f"{r['image']}: unreadable")
                continue
            faces = " ".join(f"{d['value'] or ''}?" if d.get("uncertain") else str(d["value"]) for d in r["dice"])
            n_unsure = sum(1 for d in r["dice"] if d.get("uncertain"))
            note = f" ({n_unsure} uncertain)" if n_unsure else ""
            print(f"{r['image']} {r['width']}x{r['height']} {r['ms']:.1f} ms: "
                  f"{count(len(r['dice']), 'die')}: {faces or '-'}{note}")
    return 2 if failed else 0


def cmd_eval(args: argparse.Namespace) -> int:
    """``kosti eval``: metrics of the reader on a dataset split (plus plots with ``--plots``)."""
    from kosti.vision.evaluate import evaluate, load_dataset

    dataset = load_dataset(args.data, args.split)
    _check_outputs(args)  # before the minutes of reading: an unwritable --plots is said now, in one line
    reader = _reader(args)
    report = evaluate(reader, dataset, compute_map=not args.no_map,
                      progress=_progress(len(dataset.items), f"eval {dataset.split}"))
    doc = report.to_json()
    if args.plots is not None:
        from kosti.vision.eval_plots import write_plots

        written = write_plots(report, args.plots)
        print(f"kosti eval: wrote {len(written)} files to {args.plots}", file=sys.stderr)
    if args.fit_temperature is not None:
        _fit_temperature(reader, dataset, args)
    if args.json:
        print(json.dumps(doc))
        return 0
    print(f"reader: {reader.describe()}")
    print(f"data:   {args.data} [{dataset.split}]  {doc['images']} images, {doc['dice']} dice")
    print(f"precision {doc['precision']:.4f}  recall {doc['recall']:.4f}  mAP50 {doc['mAP50']:.4f}  "
          f"mAP50-95 {doc['mAP50_95']:.4f}")
    print(f"die_accuracy {doc['die_accuracy']:.4f}  image_exact {doc['image_exact']:.4f}  "
          f"uncertain dice {report.uncertain}")
    print(f"ms/image median {doc['ms_per_image_median']:.1f}")
    cm = report.confusion_full
    cols = ["1", "2", "3", "4", "5", "6", "?", "miss"]
    print("true\\read " + " ".join(f"{c:>5}" for c in cols))
    for i, row in enumerate(cm):
        label = str(i + 1) if i < 6 else "extra"
        print(f"{label:>9} " + " ".join(f"{int(v):>5}" for v in row))
    return 0


def _fit_temperature(reader: DiceReader, dataset: Dataset, args: argparse.Namespace) -> None:
    """Fit and write the classifier temperature (stderr gets a one-line summary)."""
    from kosti.vision.evaluate import (
        DatasetError,
        collect_face_probs,
        expected_calibration_error,
        fit_temperature,
        nll,
    )

    probs, target = collect_face_probs(reader, dataset, _progress(len(dataset.items), "calibrate"))
    if len(target) == 0:
        raise DatasetError(f"no matched dice in {args.data} [{dataset.split}] to calibrate on")
    t = fit_temperature(probs, target)
    doc: dict[str, Any] = {
        "temperature": round(t, 4),
        "views": reader.views,  # read beside the classifier as reader.json, it keeps the views it was fitted in
        "data": str(args.data),
        "split": dataset.split,
        "dice": int(len(target)),
        "nll": [round(nll(probs, target), 4), round(nll(probs, target, t), 4)],
        "ece": [round(expected_calibration_error(probs, target), 4),
                round(expected_calibration_error(probs, target, t), 4)],
    }
    args.fit_temperature.parent.mkdir(parents=True, exist_ok=True)
    args.fit_temperature.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"kosti eval: temperature {doc['temperature']} on {count(doc['dice'], 'die')} (NLL {doc['nll'][0]} → "
          f"{doc['nll'][1]}, ECE {doc['ece'][0]} → {doc['ece'][1]}) written to {args.fit_temperature}",
          file=sys.stderr)


def _check_outputs(args: argparse.Namespace) -> None:
    """``kosti eval``'s outputs: ``--plots`` a folder and ``--fit-temperature`` a file kosti can write
    (:class:`kosti.common.writable.UnwritablePath`, exit 2, when not)."""
    from kosti.common.writable import writable_dir, writable_file

    if args.plots is not None:
        writable_dir(args.plots, "--plots folder")
    if args.fit_temperature is not None:
        writable_file(args.fit_temperature, "--fit-temperature file")


def cmd_export(args: argparse.Namespace) -> int:
    """``kosti export``: ONNX (runtime) or NCNN (Raspberry Pi) from Ultralytics ``.pt`` weights, written beside
    them (:class:`kosti.common.writable.UnwritablePath`, exit 2, when that folder cannot be written)."""
    from kosti.common.writable import writable_dir
    from kosti.vision.ultralytics_backend import export_model

    if Path(args.weights).is_file():
        writable_dir(Path(args.weights).parent, "the weights' folder")
    int8 = getattr(args, "int8_weights", None)
    if int8 is not None:
        from kosti.datasets.ncnn_weights import NcnnWeightsError, int8_weights_into_ncnn

        if args.format != "ncnn" or not Path(int8).is_file():
            raise NcnnWeightsError(f"--int8-weights {int8}: " + ("only with --format ncnn" if args.format != "ncnn"
                                                                 else "no such file"))

    out = export_model(args.weights, args.format, args.imgsz)
    if int8 is not None:
        int8_weights_into_ncnn(Path(int8), Path(out))
    if args.json:
        print(json.dumps({"weights": str(args.weights), "format": args.format, "output": str(out)}))
    else:
        print(out)
    return 0
