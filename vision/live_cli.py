"""``kosti watch``: run the live pipeline offline over a video file or an ordered folder of frames.

Contract (``../shared/docs/cli.md``)::

    kosti watch [--rules PRESET] [--json] VIDEO_OR_FOLDER

JSON: ``{"throws": [{"frame", "time_s", "dice": [{"value", "confidence", "box"}], "status"}], "frames",
"fps_processed"}``. A folder is an ordered folder of frames, as the contract says: its images, in natural name
order, are consecutive frames ``--fps`` (30) apart (:class:`~kosti.vision.video_source.FrameFolderSource`). With
``--photos`` it is a folder of *photos* of separate throws instead, replayed by :class:`~kosti.sim.replay.FolderSource`
(each photo held still, synthetic hand motion between photos); so is one photo. A video is read as fast as possible
with its own timestamps. With ``--rules`` the throws are played through a
game of that preset: each throw must hold the game's number of dice to throw (else it is
``uncertain``), and the human-readable output shows the game's log. The game is the dashboard's
:class:`~kosti.dashboard.session.GameSession` on a database in memory — the one place a throw is decided
(applied, held, refused, corrected), for the table and for this command alike.

A throw that corrects an earlier one (a die tipped over after the throw was read: the same physical
throw) replaces it in ``throws`` and carries ``"corrects": <frame of the replaced throw>``; with
``--rules`` the session takes back the replaced throw and plays the corrected one. When the
video ends during a rest that has lasted at least half the still time, that rest is read too, with the
warning reason ``short_rest``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from kosti.vision.sources import SourceError, open_source, parse_source_spec

#: Why a settle event gave no throw, for the human-readable output.
_SKIPPED = {
    "empty": "no dice in the roll area",
    "same": "same dice as the last throw",
    "hand": "a hand is in the roll area",
    "turning": "a die is still turning",
}


class WatchInputError(ValueError):
    """Bad input to ``kosti watch`` (missing path, unknown preset): exit code 2."""

    exit_code = 2


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``watch`` subcommand to the ``kosti`` parser."""
    p = subparsers.add_parser(
        "watch",
        help="run the live pipeline over a video or a folder of frames and print every settled throw",
        description="Replay a video file or an ordered folder of frames through the live pipeline "
        "(settle detection → dice reader → throw) and print every settled throw.",
    )
    p.add_argument("source", metavar="VIDEO_OR_FOLDER", nargs="?", default=None,
                   help="video file, or folder of its frames (images, in name order: f9 before f10)")
    p.add_argument("--truth", metavar="DIR", type=Path, default=None,
                   help="score the pipeline on a folder of clips whose throws are known (what `kosti run --record DIR` "
                        "keeps, clips with a throws.json, or what `kosti datasets clips --out DIR` writes): throws right, "
                        "missed, extra, merged, and seconds from rest to read")
    p.add_argument("--fps", type=float, default=30.0, metavar="FPS",
                   help="frame rate of a folder of frames (default 30; a video file has its own)")
    p.add_argument("--photos", action="store_true",
                   help="the folder holds photos of separate throws, not frames: hold each still and draw "
                        "hand motion between them")
    p.add_argument("--rotate", type=int, default=0, choices=(0, 90, 180, 270), metavar="DEGREES",
                   help="turn every frame clockwise by 0, 90, 180 or 270 degrees (a clip from a camera mounted "
                        "sideways; at an angle, until the far side of the table is at the top; default 0)")
    p.add_argument("--rules", metavar="PRESET", default=None,
                   help="play the throws through a game of this preset (expected dice come from the game)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--dice", type=int, default=None, metavar="N",
                   help="expected dice per throw when --rules is not given (default: any number)")
    p.add_argument("--model", type=Path, default=None, metavar="PATH",
                   help="detector weights (default: the active model version, see `kosti models list`)")
    p.add_argument("--cls-model", type=Path, default=None, metavar="PATH",
                   help="face classifier weights (default: the active version's)")
    p.set_defaults(func=run_watch)


def _open(path: Path, photos: bool = False, fps: float = 30.0, rotate: int = 0) -> Any:
    """A folder (of frames, or with ``photos`` of separate throws), a photo or a video file as a source played as fast
    as possible (the one spec grammar), its frames turned clockwise by ``rotate`` degrees."""
    try:
        kind: str = parse_source_spec(str(path)).kind
    except SourceError:
        kind = ""
    if kind not in ("folder", "photo", "video"):
        raise WatchInputError(f"{path}: no such file or folder")
    if not (fps > 0 and fps <= 1000):
        raise WatchInputError(f"--fps must be above 0 and at most 1000, got {fps:g}")
    return open_source(str(path), realtime=False, reconnect=False, fps=fps if kind == "folder" and not photos else None,
                       photos=photos, rotate=rotate)


def _new_game(preset: str) -> Any:
    """A new game of ``preset`` (a preset of either family or a rules file) with its fewest players."""
    return _start(preset)[1]


def _start(preset: str) -> tuple[list[str], Any]:
    """``(players, game)``: a new game of ``preset`` and its fewest players, called "Player 1" …; raises
    :class:`WatchInputError` for an unknown preset or a rules file the engine refuses."""
    try:
        from kosti.engine import BadInput, new_game, resolve_rules
    except ImportError as exc:  # pragma: no cover - engine is part of the base install
        raise WatchInputError(f"--rules needs kosti.engine: {exc}") from exc
    from kosti.engine.games import game_preset, is_game_preset, new_any_game, unknown_preset
    from kosti.engine.presets import PRESET_NAMES

    if is_game_preset(preset):  # the other dice games of games.md (Pig, Chicago, …)
        names = [f"Player {i + 1}" for i in range(max(1, game_preset(preset).cls.PLAYERS[0]))]
        return names, new_any_game(preset, names)
    if preset not in PRESET_NAMES and not preset.endswith((".json", ".toml")):
        raise WatchInputError(str(unknown_preset(preset)))
    try:
        rules = resolve_rules(preset)
    except BadInput as exc:
        raise WatchInputError(str(exc)) from exc
    except (KeyError, ValueError) as exc:
        raise WatchInputError(f"unknown preset {preset!r}") from exc
    names = [f"Player {i + 1}" for i in range(max(1, int(rules.players.min)))]
    return names, new_game(rules, names)


def _session(preset: str) -> Any:
    """A :class:`~kosti.dashboard.session.GameSession` on a database in memory with a game of ``preset`` on it
    (its fewest players, called "Player 1" …); :class:`WatchInputError` for an unknown preset or rules file."""
    from kosti.dashboard.session import GameSession
    from kosti.dashboard.store import Store

    names, game = _start(preset)  # an unknown preset or a refused rules file: exit 2 before anything is read
    session = GameSession(Store(":memory:"))
    file = preset.endswith((".json", ".toml"))  # a rules file: the game made of it, as the session cannot name it
    session.new_game(names, preset, actor="watch", start=game if file else None)
    return session


def _play(session: Any, throw: Any) -> str:
    """Hand the settled ``throw`` to ``session`` as the table would (:meth:`GameSession.submit_throw`) and say what
    the game did: its events, or why an ``ok`` throw was not scored (``game: …``), one indented line each."""
    from kosti.dashboard.throws import throw_from_pipeline

    if session.state is None or session.state.over:
        return ""
    events: list[Any] = []

    def heard(applied: Any) -> None:
        events.extend(applied.events)

    session.action_listeners.append(heard)
    try:
        out = session.submit_throw(throw_from_pipeline(throw), actor="watch")
    finally:
        session.action_listeners.remove(heard)
    if events:
        return "\n    " + "\n    ".join(str(e["text_en"]) for e in events)
    refused = [r.split(" / ")[0] for r in out["reasons"] if r not in throw.reasons]
    return "".join(f"\n    game: {r}" for r in refused) if throw.ok else ""


def run_watch(args: argparse.Namespace) -> int:
    """Handler of ``kosti watch``; returns the exit code (0). Raises errors carrying ``exit_code`` 2."""
    from kosti.vision.pipeline import FrameResult, LivePipeline, RunnerObserver, default_reader
    from kosti.vision.sources import Frame

    if args.truth is not None:
        return _run_truth(args)
    if args.source is None:
        raise WatchInputError("give a video or a folder of frames (or --truth DIR)")
    path = Path(args.source).expanduser()
    source = _open(path, args.photos, args.fps, args.rotate)
    session = _session(args.rules) if args.rules else None
    if args.dice is not None and args.dice < 1:
        raise WatchInputError("--dice must be >= 1")
    from kosti.registry import reader_files

    det, cls, _version = reader_files(args.model, args.cls_model)
    reader = default_reader(det_path=det, cls_path=cls)
    expected = session.state.dice_to_throw if session is not None else args.dice
    # The one camera runner, in this thread; a source or reader error ends the run (retry_s=None).
    pipe = LivePipeline(source, reader, expected_dice=expected, retry_s=None, tick_s=0, keep_image=False)
    throws: list[dict[str, Any]] = []
    log: list[str] = []
    t0 = time.perf_counter()

    def take(result: Any, frame_index: int, t: float) -> None:
        throw = result.throw
        if throw is None:
            if result.skipped and not args.json:
                print(f"frame {frame_index:5d}  t={t:7.2f} s  settled, not a throw: {_SKIPPED[result.skipped]}",
                      flush=True)
            return
        entry = throw.to_dict()
        line = (f"frame {throw.frame_index:5d}  t={throw.time_s:7.2f} s  {throw.status:9s}  "
                f"{' '.join(str(d.value) if not d.uncertain else '?' for d in throw.dice)}")
        if throw.reasons:
            line += "  (" + "; ".join(throw.reasons) + ")"
        if throw.corrects is not None:
            # The same physical throw, corrected: it replaces the earlier one (one throw, one score).
            line += f"\n    corrects the throw at frame {throw.corrects}"
            throws[:] = [x for x in throws if x["frame"] != throw.corrects]
        throws.append(entry)
        if session is not None:  # the session takes back a corrected throw itself (one throw, one score)
            line += _play(session, throw)
            game = session.state
            pipe.expect(sizes=None if game is None or game.over else (game.dice_to_throw,))
        log.append(line)
        if not args.json:
            print(line, flush=True)

    class Watch(RunnerObserver):
        def frame(self, frame: Frame, result: FrameResult | None) -> None:
            if result is not None:
                take(result, frame.index, frame.t)

    pipe.observer = Watch()
    try:
        with source:
            pipe.run()  # at the end of the video a rest of at least half the still time is read (short_rest)
    except SourceError as exc:
        raise WatchInputError(str(exc)) from exc
    frames = pipe.frames_read
    if not throws and getattr(source, "kind", "") == "frames" and frames < 30:  # (stderr: the JSON stays one document)
        print(f"kosti watch: no throw in {frames} frames; if {path} holds photos of separate throws rather than the "
              "frames of a video, add --photos", file=sys.stderr)
    elapsed = time.perf_counter() - t0
    fps = frames / elapsed if elapsed > 0 else 0.0
    if args.json:
        json.dump({"throws": throws, "frames": frames, "fps_processed": round(fps, 1)}, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print(f"{len(throws)} throws, {frames} frames, {fps:.1f} frames/s processed")
        game = session.state if session is not None else None
        if game is not None:
            s = game.summary() if hasattr(game, "summary") else {}
            scores = ", ".join(f"{p['name']} {p['score']}" for p in s.get("players", []))
            if scores:
                print(f"scores: {scores}" + (f"; winner: {s['winner']}" if s.get("winner") else ""))
    return 0


def _run_truth(args: argparse.Namespace) -> int:
    """``kosti watch --truth DIR``: replay every clip of a truth folder and score it (:mod:`kosti.vision.truth`)."""
    from kosti.registry import reader_files
    from kosti.vision.pipeline import LivePipeline, default_reader
    from kosti.vision.truth import TruthError, load_truth, score_folder, table

    if args.source is not None or args.rules:
        raise WatchInputError("--truth DIR replaces VIDEO_OR_FOLDER and --rules")
    folder = Path(args.truth).expanduser()
    try:
        load_truth(folder)  # (bad input is refused before the model loads)
    except TruthError as exc:
        raise WatchInputError(str(exc)) from exc
    det, cls, _version = reader_files(args.model, args.cls_model)
    reader = default_reader(det_path=det, cls_path=cls)

    def watch(clip: Path, dice: int | None) -> list[dict[str, Any]]:
        source = _open(clip, rotate=args.rotate)
        pipe = LivePipeline(source, reader, expected_dice=args.dice or dice, retry_s=None, tick_s=0, keep_image=False)
        seen: list[dict[str, Any]] = []
        pipe.subscribe(lambda throw: seen.append(throw.to_dict()))
        try:
            with source:
                pipe.run()
        except SourceError as exc:
            raise WatchInputError(f"{clip}: {exc}") from exc
        return seen

    report = score_folder(folder, watch)
    if args.json:
        json.dump(report, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print(table(report))
    return 0
