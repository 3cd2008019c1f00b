"""Score the live pipeline on clips whose throws are known: ``kosti watch --truth DIR`` (issue 40).

A truth folder holds video clips and what each must give, in any of three shapes:

* ``DIR/throws.json`` — ``{clip file name: {"throws": [[faces ascending], ...], "rest_s": [start, end]}}``, the
  shape of ``../shared/clips/real-throws/throws.json`` (``rest_s``: when the dice came to rest and when a hand or
  shadow reached them; for a clip of several throws, a list of such pairs, one per throw);
* ``DIR/<clip>.json`` beside each clip, one entry of that shape — what ``kosti run --record DIR`` writes: the
  throw as the game finally recorded it, after any fix or confirmation at the table;
* ``DIR/clips.json`` — what ``kosti datasets clips --out DIR`` writes (:func:`kosti.datasets.clips.write`): for each
  clip its file, its dice count (``kosti watch --dice``) and its throws with faces, the true rest and the status the
  throw must have (``ok``, or ``uncertain`` where a die left the picture).

Every clip is replayed through the one runner (:class:`kosti.vision.runner.LivePipeline`, as ``kosti watch``), a
throw that corrects an earlier one replacing it, and its throws are matched in order with the truth:

* ``right`` — read with the true faces, ``ok`` (or the status ``clips.json`` names); ``missed`` — a true throw no reported throw matches;
* ``extra`` — a reported throw that matches no true throw (a pause read as a throw, a misread, one that asks);
* ``merged`` — a true throw deleted by a correction (``corrects``) that was really a new throw (issue 40: the worst
  error, a scored throw gone unseen);
* ``read_s`` — seconds from the true rest to the frame the throw was read at, for each right throw.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Video files a truth folder may hold.
CLIP_SUFFIXES = (".mp4", ".avi", ".mkv", ".mov", ".webm")


class TruthError(ValueError):
    """A truth folder that cannot be scored (missing, no clips, a malformed truth file): exit code 2."""

    exit_code = 2


def load_truth(folder: Path) -> dict[str, dict[str, Any]]:
    """``{clip file name: {"throws": [[faces]], "rest_s": [[start, end], ...]}}`` of a truth folder (module
    docstring), ``rest_s`` one pair per throw (None where unknown). Clips without a truth are left out.

    Raises:
        TruthError: no such folder, a truth file that is not JSON of that shape, or no clip with a truth.
    """
    if not folder.is_dir():
        raise TruthError(f"{folder}: no such folder")
    entries: dict[str, Any] = {}
    shared = folder / "throws.json"
    if shared.is_file():
        entries.update(_read_json(shared))
    suite = folder / "clips.json"
    suite_entries = _suite(suite, _read_json(suite)) if suite.is_file() else {}
    entries.update({k: v for k, v in suite_entries.items() if k not in entries})
    for clip in sorted(p for p in folder.iterdir() if p.suffix.lower() in CLIP_SUFFIXES):
        beside = clip.with_suffix(".json")
        if beside.is_file() and clip.name not in entries:
            entries[clip.name] = _read_json(beside)
    out: dict[str, dict[str, Any]] = {}
    for name, entry in entries.items():
        if not (folder / name).is_file():
            raise TruthError(f"{folder}: {name} is in the truth but not in the folder")
        out[name] = _entry(name, entry)
        if name in suite_entries and entry is suite_entries[name]:
            out[name].update(dice=entry["dice"], status=entry["status"])
            out[name]["rest_s"] = [[r, None] for r in entry["rest"]]  # the rest's start; no hand in the truth
    if not out:
        raise TruthError(f"{folder}: no clip with its throws (throws.json, clips.json, or a .json beside each clip)")
    return out


def _suite(path: Path, doc: Any) -> dict[str, dict[str, Any]]:
    """``clips.json`` of ``kosti datasets clips`` as truth entries by clip file: ``throws``, ``rest`` (true rest per
    throw), ``status`` (the status each throw must have), ``dice`` (expected dice count or None)."""
    clips = doc.get("clips") if isinstance(doc, dict) else None
    if not isinstance(clips, list):
        raise TruthError(f"{path}: not a clip suite (no \"clips\" list)")
    out: dict[str, dict[str, Any]] = {}
    for c in clips:
        throws = c.get("throws") if isinstance(c, dict) else None
        if not isinstance(c, dict) or not isinstance(c.get("file"), str) or not isinstance(throws, list) or not all(
                isinstance(t, dict) and isinstance(t.get("rest_s"), (int, float)) for t in throws):
            raise TruthError(f"{path}: each clip needs \"file\" and \"throws\" with \"faces\" and \"rest_s\"")
        dice = c.get("dice")
        out[c["file"]] = {"throws": [t.get("faces") for t in throws], "rest": [float(t["rest_s"]) for t in throws],
                          "status": [str(t.get("status", "ok")) for t in throws],
                          "dice": dice if isinstance(dice, int) and dice > 0 else None}
    return out


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TruthError(f"{path}: not a JSON truth file ({exc})") from exc


def _entry(name: str, entry: Any) -> dict[str, Any]:
    """One clip's truth checked and normalised (``rest_s`` as one ``[start, end]`` pair or None per throw)."""
    throws = entry.get("throws") if isinstance(entry, dict) else None
    if not isinstance(throws, list) or not all(
            isinstance(t, list) and t and all(isinstance(f, int) and 1 <= f <= 6 for f in t) for t in throws):
        raise TruthError(f"{name}: \"throws\" must be a list of throws, each a list of faces 1-6")
    rest = entry.get("rest_s")
    if rest is None:
        pairs: list[Any] = [None] * len(throws)
    elif isinstance(rest, list) and len(rest) == 2 and all(isinstance(v, (int, float)) for v in rest):
        pairs = [[float(rest[0]), float(rest[1])]] + [None] * (len(throws) - 1)
    elif isinstance(rest, list) and len(rest) == len(throws) and all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(v, (int, float)) for v in p) for p in rest):
        pairs = [[float(p[0]), float(p[1])] for p in rest]
    else:
        raise TruthError(f"{name}: \"rest_s\" must be [start, end] or one such pair per throw")
    return {"throws": [sorted(int(f) for f in t) for t in throws], "rest_s": pairs}


def judge(truth: dict[str, Any], seen: list[dict[str, Any]]) -> dict[str, Any]:
    """One clip's verdict: ``truth`` as :func:`load_truth` gives it, ``seen`` the ``kosti watch --json`` throws in the
    order reported (a throw with ``corrects`` replaced the one it names).

    Returns:
        ``{"truth", "seen", "right", "missed", "extra", "merged", "read_s"}``: ``seen`` the final throws as sorted
        faces (``"?"`` for a die not read) with status, ``read_s`` one number per right throw with a known rest.
    """
    final: list[dict[str, Any]] = []
    merged = 0
    want = truth["throws"]
    for t in seen:
        if "corrects" in t:
            gone = [x for x in final if x["frame"] == t["corrects"]]
            if gone and _faces(gone[0]) in want and _faces(t) in want and _faces(gone[0]) != _faces(t):
                merged += 1  # both the deleted throw and its "correction" were true throws
            final = [x for x in final if x["frame"] != t["corrects"]]
        final.append(t)
    right, read_s, k = 0, [], 0
    used: set[int] = set()
    status = truth.get("status") or ["ok"] * len(want)
    for i, faces in enumerate(want):
        for j in range(k, len(final)):
            if _faces(final[j]) == faces and final[j].get("status") == status[i]:
                right += 1
                used.add(j)
                k = j + 1
                rest = truth["rest_s"][i]
                if rest is not None:
                    read_s.append(round(float(final[j]["time_s"]) - rest[0], 3))
                break
    return {"truth": want, "seen": [[*sorted(_shown(t)), t.get("status")] for t in final], "right": right,
            "missed": len(want) - right, "extra": len(final) - len(used), "merged": merged, "read_s": read_s}


def _faces(throw: dict[str, Any]) -> list[int]:
    return sorted(int(d["value"]) for d in throw["dice"] if not d.get("uncertain"))


def _shown(throw: dict[str, Any]) -> list[Any]:
    return [d["value"] if not d.get("uncertain") else "?" for d in throw["dice"]]


def score_folder(folder: Path, watch: Callable[[Path, int | None], list[dict[str, Any]]]) -> dict[str, Any]:
    """Score every clip of a truth folder: ``watch(clip, dice)`` replays one clip (``dice``: the clip's dice count
    in ``clips.json``, else the count of its first true throw when all its throws have that count, else None) and
    returns its ``kosti watch --json`` throws.

    Returns:
        ``{"folder", "clips": [{"clip", ...judge}], "total": {"throws", "right", "missed", "extra", "merged",
        "read_s_median", "read_s_max"}}`` (the read times None without any).

    Raises:
        TruthError: as :func:`load_truth`.
    """
    truth = load_truth(folder)
    clips = []
    for name, entry in truth.items():
        counts = {len(t) for t in entry["throws"]}
        dice = entry.get("dice") or (counts.pop() if len(counts) == 1 else None)
        verdict = judge(entry, watch(folder / name, dice))
        clips.append({"clip": name, **verdict})
    reads = sorted(v for c in clips for v in c["read_s"])
    total = {k: sum(c[k] for c in clips) for k in ("right", "missed", "extra", "merged")}
    total["throws"] = sum(len(c["truth"]) for c in clips)
    median = None
    if reads:
        mid = len(reads) // 2
        median = reads[mid] if len(reads) % 2 else round((reads[mid - 1] + reads[mid]) / 2, 3)
    return {"folder": str(folder), "clips": clips,
            "total": {**total, "read_s_median": median, "read_s_max": reads[-1] if reads else None}}


def table(report: dict[str, Any]) -> str:
    """The short table of :func:`score_folder`'s report (one line per clip, then the total)."""
    lines = [f"{'clip':24s} {'throws':>6s} {'right':>5s} {'missed':>6s} {'extra':>5s} {'merged':>6s}  read after rest (s)"]
    for c in report["clips"]:
        lines.append(f"{c['clip'][:24]:24s} {len(c['truth']):6d} {c['right']:5d} {c['missed']:6d} {c['extra']:5d} "
                     f"{c['merged']:6d}  {' '.join(f'{v:.2f}' for v in c['read_s']) or '-'}")
    t = report["total"]
    med = "-" if t["read_s_median"] is None else f"median {t['read_s_median']:.2f}, max {t['read_s_max']:.2f}"
    lines.append(f"{'total':24s} {t['throws']:6d} {t['right']:5d} {t['missed']:6d} {t['extra']:5d} {t['merged']:6d}  {med}")
    return "\n".join(lines)
