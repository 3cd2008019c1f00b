"""``kosti models`` — list, add, activate and roll back reader model versions (see :mod:`kosti.registry`).

Subcommands (exit 0 ok, 2 refused or bad input with a one-line reason on stderr):

* ``kosti models list [--no-measure] [--json]`` — every version, the active one marked, each with the same
  metrics on the same shipped reference photos (:mod:`kosti.datasets.replay`; measured once and cached
  per model files) and its own held-back numbers; JSON ``{"active": "shipped", "previous": null, "root":
  "...", "versions": [{**VersionInfo.to_json(), "reference": {...} | null, "held_back": {...} | null}, ...]}``.
* ``kosti models use VERSION [--force] [--json]`` — activate a version; a running dashboard switches
  on its next poll. Refused when its metrics are worse than the active version's unless ``--force``.
* ``kosti models rollback [--json]`` — re-activate the previously active version.
* ``kosti models add --det F --cls F [--det-ncnn DIR --cls-ncnn DIR] [--metrics JSON] [--card MD]
  [--name NAME] [--activate] [--force] [--json]`` — register a trained pair.

``--registry DIR`` (any subcommand) points at another registry root than
``$XDG_DATA_HOME/kosti/models``. Runnable as ``python -m kosti.models_cli`` before it is registered
in the top-level dispatcher.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from kosti.engine.plurals import count
from kosti.registry import Registry, RegistryError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``models`` command (with ``list``, ``use``, ``rollback``, ``add``) to ``subparsers``."""
    p = subparsers.add_parser(
        "models", help="list, add, activate and roll back reader model versions",
        description="Manage the versioned dice-reader models (detector + face classifier).")
    sub = p.add_subparsers(dest="models_command", metavar="ACTION", required=True)

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--registry", type=Path, default=None, metavar="DIR",
                        help="registry root (default $XDG_DATA_HOME/kosti/models)")
    common.add_argument("--json", action="store_true", help="print one JSON document")

    ls = sub.add_parser("list", parents=[common], help="list model versions with their reference and held-back numbers")
    ls.add_argument("--no-measure", action="store_true",
                    help="do not measure versions without reference numbers (the first listing reads every "
                         "reference photo with each version, ~15 s a version, and says so on stderr)")
    ls.set_defaults(func=_cmd_list)

    use = sub.add_parser("use", parents=[common], help="activate a model version")
    use.add_argument("version", help="version name, or 'shipped'")
    use.add_argument("--force", action="store_true",
                     help="activate even if its metrics are worse than the active version's")
    use.set_defaults(func=_cmd_use)

    rb = sub.add_parser("rollback", parents=[common], help="re-activate the previously active version")
    rb.set_defaults(func=_cmd_rollback)

    add = sub.add_parser("add", parents=[common], help="register a trained detector + classifier pair")
    add.add_argument("--det", type=Path, required=True, help="detector ONNX file")
    add.add_argument("--cls", type=Path, required=True, help="face classifier ONNX file")
    add.add_argument("--det-ncnn", type=Path, default=None, help="detector NCNN export folder")
    add.add_argument("--cls-ncnn", type=Path, default=None, help="classifier NCNN export folder")
    add.add_argument("--metrics", type=Path, default=None, help="kosti eval --json output of this pair")
    add.add_argument("--card", type=Path, default=None, help="model card (Markdown)")
    add.add_argument("--name", default=None, help="version name (default: UTC time YYYYmmdd-HHMMSS)")
    add.add_argument("--activate", action="store_true", help="activate it after adding")
    add.add_argument("--force", action="store_true", help="with --activate: even if worse")
    add.set_defaults(func=_cmd_add)


def _registry(args: argparse.Namespace) -> Registry:
    return Registry(args.registry)


def measuring_progress(version: str, root: Path, stream: TextIO | None = None) -> Callable[[Iterable[Any]], Iterator[Any]]:
    """A ``progress`` wrapper for :func:`kosti.datasets.replay.reference_metrics` that tells the user why the first
    ``kosti models list`` takes a while (issue 42 #12: it was silent for ~10 s, reading every reference photo with
    the version's reader — not an import): one line on ``stream`` (default stderr, so ``--json`` stays one
    document) naming the version, the photo count and the cache, a photo counter updated in place when ``stream``
    is a terminal, and a closing line with the seconds it took. Called only on a cache miss."""

    def wrap(items: Iterable[Any]) -> Iterator[Any]:
        out = sys.stderr if stream is None else stream
        photos = list(items)
        n, tty, t0 = len(photos), out.isatty(), time.monotonic()
        print(f"kosti models: measuring {version!r} on the reference set, {count(n, 'photo')} (once; the numbers are "
              f"kept in {root}) ...", file=out, flush=True)
        for i, item in enumerate(photos, 1):
            yield item
            if tty:
                print(f"\r  {i}/{count(n, 'photo')}", end="", file=out, flush=True)
        print(("\n" if tty else "") + f"kosti models: {version!r} measured in {time.monotonic() - t0:.0f} s",
              file=out, flush=True)

    return wrap


def version_numbers(reg: Registry, v, measure: bool = True, progress: bool = False) -> dict:
    """``{"reference": metrics | None, "held_back": metrics | None, "reference_error"?: str}`` of one version.

    ``reference``: the version measured on the shipped reference photos (:mod:`kosti.datasets.replay`) —
    stored with the version by ``kosti train``, else measured now (``measure``) and cached in the registry
    root by the model files' SHA-256, so every version, ``shipped`` included, is compared on the same photos.
    ``held_back``: the version's own held-back numbers (``kosti train``), or ``None``. ``progress``: say on
    stderr when photos are being read (:func:`measuring_progress`).
    """
    from kosti.datasets.replay import reference_id, reference_metrics

    out: dict = {"reference": None, "held_back": v.metrics.get("held_back")}
    stored = v.metrics.get("reference")
    if isinstance(stored, dict) and stored.get("data") == reference_id():
        out["reference"] = stored
        return out
    if not measure:
        return out
    p = reg.paths(v.version)
    try:
        out["reference"] = reference_metrics(p.detector, p.classifier, cache_dir=reg.root,
                                             progress=measuring_progress(v.version, reg.root) if progress else None)
    except Exception as exc:  # noqa: BLE001 - one unusable version must not hide the others
        out["reference_error"] = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return out


def _cmd_list(args: argparse.Namespace) -> int:
    reg = _registry(args)
    versions = reg.list_versions()
    active, previous = reg.active_version(), reg.previous_version()
    numbers = [version_numbers(reg, v, measure=not args.no_measure, progress=True) for v in versions]
    if args.json:
        print(json.dumps({"active": active, "previous": previous, "root": str(reg.root),
                          "versions": [{**v.to_json(), **n} for v, n in zip(versions, numbers)]},
                         ensure_ascii=False))
        return 0
    ref = next((n["reference"] for n in numbers if n["reference"]), None)
    print(f"registry: {reg.root}")
    if ref:
        print(f"reference: the same {count(ref['images'], 'photo')} ({count(ref['dice'], 'die')}) for every version, never trained on; "
              "held-back: the version's own photos kept out of its training")
    print(f"  {'version':<20} {'created':<21} {'reference: precision recall die_acc exact':<44} held-back")
    for v, n in zip(versions, numbers):
        mark = "*" if v.active else " "
        r, h = n["reference"], n["held_back"]
        rtext = (f"{r['precision']:>20.3f} {r['recall']:>6.3f} {r['die_accuracy']:>8.3f} {r['image_exact']:>5.3f}"
                 if r else f"{'not measured':>20} ({n.get('reference_error', '--no-measure')})"[:44])
        htext = (f"{count(h['images'], 'photo') if isinstance(h.get('images'), int) else '? photos'}: precision {h['precision']:.3f} recall {h['recall']:.3f} "
                 f"die_acc {h['die_accuracy']:.3f}" if isinstance(h, dict) and "precision" in h else "-")
        print(f"{mark} {v.version:<20} {v.created or '-':<21} {rtext:<44} {htext}")
    return 0


def _writable_registry(args: argparse.Namespace) -> Registry:
    """The registry of a command that changes it (``use``, ``rollback``, ``add``); its folder must be writable
    (:class:`kosti.common.writable.UnwritablePath`, exit 2, one line, before anything changes)."""
    from kosti.common.writable import writable_dir

    reg = _registry(args)
    writable_dir(reg.root, "model registry")
    return reg


def _cmd_use(args: argparse.Namespace) -> int:
    reg = _writable_registry(args)
    before = reg.use(args.version, force=args.force)
    return _report(args, reg, "use", before)


def _cmd_rollback(args: argparse.Namespace) -> int:
    reg = _writable_registry(args)
    before = reg.active_version()
    reg.rollback()
    return _report(args, reg, "rollback", before)


def _cmd_add(args: argparse.Namespace) -> int:
    reg = _writable_registry(args)
    files: dict[str, Path] = {"det": args.det, "cls": args.cls}
    if args.det_ncnn is not None:
        files["det_ncnn"] = args.det_ncnn
    if args.cls_ncnn is not None:
        files["cls_ncnn"] = args.cls_ncnn
    card = None
    if args.card is not None:
        try:
            card = args.card.read_text(encoding="utf-8")
        except OSError as exc:
            raise RegistryError(f"{args.card}: cannot read the model card ({exc.strerror})") from exc
    name = reg.add_version(files, args.metrics, version=args.name, card=card,
                           source=str(args.det.resolve().parent))
    activated = False
    if args.activate:
        reg.use(name, force=args.force)  # refusal -> exit 2, the version stays registered
        activated = True
    if args.json:
        print(json.dumps({"version": name, "active": reg.active_version(), "activated": activated}))
    else:
        print(f"added model version {name}" + (" (active)" if activated else ""))
    return 0


def _report(args: argparse.Namespace, reg: Registry, action: str, before: str) -> int:
    now = reg.active_version()
    if args.json:
        print(json.dumps({"action": action, "active": now, "previous": before}))
    else:
        print(f"active model: {now} (was {before})")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``kosti models ...`` standalone (``python -m kosti.models_cli list``); returns the exit code."""
    parser = argparse.ArgumentParser(prog="kosti")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["models", *(sys.argv[1:] if argv is None else argv)])
    try:
        return int(args.func(args) or 0)
    except RegistryError as exc:
        print(f"kosti models: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
