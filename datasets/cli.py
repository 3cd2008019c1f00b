"""``kosti datasets ...`` — tools that build training data.

``kosti datasets synth`` writes seeded synthetic dice scenes (detector set) or classifier crops; see
:mod:`kosti.datasets.synth`. Other actions (``prepare``) register beside it through
:data:`DATASET_ACTIONS`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from kosti.engine.plurals import count

#: Registrars of ``kosti datasets <action>`` subcommands, in help order. Each takes the
#: ``datasets`` sub-subparsers object and adds one action whose ``func(args) -> int`` handles it.
DATASET_ACTIONS: list[Callable[[argparse._SubParsersAction], None]] = []


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``kosti datasets`` and its actions to the top-level subparsers."""
    parser = subparsers.add_parser(
        "datasets",
        help="build training data (synthetic scenes and crops)",
        description="Build training data sets for the dice detector and face classifier.",
    )
    actions = parser.add_subparsers(dest="datasets_action", metavar="ACTION")
    for add in DATASET_ACTIONS:
        add(actions)

    def _help(_args: argparse.Namespace) -> int:
        parser.print_help()
        return 0

    parser.set_defaults(func=_help)


def _positive_int(text: str) -> int:
    v = int(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {v}")
    return v


def _fraction(text: str) -> float:
    v = float(text)
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"must be within 0-1, got {v}")
    return v


def _add_synth(actions: argparse._SubParsersAction) -> None:
    from kosti.sim.render import BACKGROUNDS, STYLES

    p = actions.add_parser(
        "synth",
        help="seeded synthetic dice scenes (YOLO) or classifier crops (ImageFolder)",
        description=(
            "Cut-and-paste scenes of real training-split dice (byler-d6/train, rune55-dedup/train) and "
            "procedurally rendered dice on varied table tops, with shadows, occlusion, blur, noise and "
            "JPEG artefacts. Same seed and settings -> byte-identical files."
        ),
    )
    p.add_argument("--out", type=Path, required=True, help="output folder (must be empty or absent)")
    p.add_argument("--n", type=_positive_int, default=5000,
                   help="scenes to write (detector set) or crops to write (--crops); default 5000")
    p.add_argument("--seed", type=int, default=1, help="series seed (default 1)")
    p.add_argument("--classes", choices=("die", "faces"), default="die",
                   help="detector labels: one class 'die' (default) or six classes, k = face k+1")
    p.add_argument("--crops", action="store_true",
                   help="write 64x64 classifier crops OUT/{train,val}/{1..6,x}/*.png instead of scenes")
    p.add_argument("--imgsz", type=int, default=640, help="scene side in pixels (default 640)")
    p.add_argument("--style", action="append", choices=sorted(STYLES), metavar="NAME", default=[],
                   help="restrict rendered dice to this style (repeatable); names: " + ", ".join(sorted(STYLES)))
    p.add_argument("--background", action="append", choices=BACKGROUNDS, metavar="NAME", default=[],
                   help="restrict procedural table tops to this kind (repeatable); names: " + ", ".join(BACKGROUNDS))
    p.add_argument("--clean", action="store_true",
                   help="no camera degradations (warp, blur, noise, colour shifts, glare; JPEG quality 95)")
    p.add_argument("--real-frac", type=_fraction, default=0.5,
                   help="share of scenes built from real dice crops (default 0.5; 0 = rendered dice only)")
    p.add_argument("--real-bg-frac", type=_fraction, default=0.2,
                   help="share of table tops cut from real training photos (default 0.2)")
    p.add_argument("--real-root", type=Path, default=None,
                   help="folder holding byler-d6 and rune55-dedup (default: ../shared/datasets of the checkout)")
    p.add_argument("--oblique", type=_fraction, default=0.0, metavar="FRAC",
                   help="share of scenes seen from the side: rendered dice lean 0.2-0.45 of their side the same "
                        "way, two side faces showing (default 0 = near top-down only)")
    p.add_argument("--wide", action="store_true",
                   help="the wide generator: dice of every colour, material (translucent, marbled, wooden) and pip "
                        "paint, carpets, quilts and game boards, hard negatives (number tokens, buttons, dominoes, "
                        "meeples, keyboards, cables, pencils) and whole-scene recolouring (default off: earlier "
                        "seeds give the same scenes)")
    p.add_argument("--val-frac", type=_fraction, default=0.1, help="share of items in the val split (default 0.1)")
    p.add_argument("--workers", type=_positive_int, default=1,
                   help="processes (default 1; the output does not depend on it)")
    p.add_argument("--overwrite", action="store_true", help="replace an earlier synth output in --out")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_run_synth)


def _run_synth(args: argparse.Namespace) -> int:
    from kosti.datasets.synth import DEFAULT_REAL_ROOT, SynthConfig, generate

    cfg = SynthConfig(
        imgsz=args.imgsz,
        classes=args.classes,
        styles=tuple(dict.fromkeys(args.style)),
        real_frac=args.real_frac,
        real_bg_frac=args.real_bg_frac,
        val_frac=args.val_frac,
        backgrounds=tuple(dict.fromkeys(args.background)),
        degrade=not args.clean,
        oblique_frac=args.oblique,
        wide=args.wide,
    )
    use_real = cfg.real_frac > 0 or cfg.real_bg_frac > 0
    root = (args.real_root or DEFAULT_REAL_ROOT) if use_real else None
    _writable_out(args.out)
    summary = generate(args.out, args.n, args.seed, cfg=cfg, crops=args.crops, real_root=root,
                       workers=args.workers, overwrite=args.overwrite, progress=not args.no_progress)
    if args.crops:
        counts = " ".join(f"{k}:{v}" for k, v in summary.per_class.items())
        print(f"wrote {sum(summary.per_class.values())} crops from {summary.scenes} scenes to {summary.out} "
              f"(train {summary.per_split['train']}, val {summary.per_split['val']}; {counts})")
    else:
        print(f"wrote {summary.scenes} scenes with {summary.labels} boxes to {summary.out} "
              f"(train {summary.per_split['train']}, val {summary.per_split['val']}); data: {summary.out / 'data.yaml'}")
    sys.stdout.flush()
    return 0


DATASET_ACTIONS.append(_add_synth)


def _add_clips(actions: argparse._SubParsersAction) -> None:
    p = actions.add_parser(
        "clips",
        help="seeded test clips of throws (shaking camera, spinning/tipping dice, hands, arms and shadows) with their truth",
        description=(
            "Write short videos of scripted throws on the virtual table and over real photos "
            "(../shared/datasets/byler-d6) — a camera shaking 0.5-3 px a frame, a die spinning or tipping "
            "over, dice on a palm, a hand resting, pick-up, slow push, a die leaving, fast re-throws, a "
            "video ending mid-rest, a die picked up and thrown again, a short rest before an arm, an arm at the "
            "edge, a shadow crossing the cloth — and OUT/clips.json with the throws each must give. Same seed -> same "
            "clips. Replay one with: kosti watch --json --dice N OUT/NAME.avi"
        ),
    )
    p.add_argument("--out", type=Path, required=True, help="output folder (must be empty or absent)")
    p.add_argument("--seed", type=int, default=1, help="seed (default 1)")
    p.add_argument("--clip", action="append", default=[], metavar="NAME",
                   help="write only this clip (repeatable); default all")
    p.add_argument("--real-root", type=Path, default=None,
                   help="folder holding byler-d6 (default: ../shared/datasets of the checkout); "
                        "without it the real-photo clip is left out")
    p.add_argument("--overwrite", action="store_true", help="write into a folder that is not empty")
    p.set_defaults(func=_run_clips)


def _writable_out(out: Path) -> None:
    """``--out`` must be a folder kosti can create and write in (:class:`kosti.common.writable.UnwritablePath`, exit 2,
    one line) — said before the scenes or clips are rendered, not after."""
    from kosti.common.writable import writable_dir

    writable_dir(out, "--out folder")


def _run_clips(args: argparse.Namespace) -> int:
    from kosti.datasets.clips import DEFAULT_REAL_ROOT, write

    _writable_out(args.out)
    try:
        manifest = write(args.out, seed=args.seed, real_root=args.real_root or DEFAULT_REAL_ROOT,
                         names=args.clip or None, overwrite=args.overwrite)
    except (ValueError, FileExistsError, FileNotFoundError) as exc:
        print(f"kosti datasets clips: {exc}", file=sys.stderr)
        return 2
    clips = manifest["clips"]
    print(f"wrote {count(len(clips), 'clip')} ({count(sum(c['frames'] for c in clips), 'frame')}, "
          f"{count(sum(len(c['throws']) for c in clips), 'expected throw')}) to {args.out}; truth: {Path(args.out) / 'clips.json'}")
    return 0


DATASET_ACTIONS.append(_add_clips)
