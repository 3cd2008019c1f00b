"""Each tuning setting of the dice reader and the settle detector, declared once (issue 39).

:class:`ReaderParams` holds :class:`kosti.vision.reader.DiceReader`'s settings and :class:`SettleParams`
:class:`kosti.vision.settle.SettleDetector`'s: per field its type, default, unit, bounds and documentation
(:func:`setting`, kept in the dataclass field's ``metadata``). Everything else is derived from them:

* the ``[reader]`` / ``[settle]`` sections of ``kosti.toml`` (:mod:`kosti.config.reader`,
  :mod:`kosti.config.settle`: :func:`config_field` gives each pydantic field its default, bounds and
  description) and so ``deploy/kosti.toml``, generated from those descriptions;
* the flags of ``kosti read`` / ``kosti eval`` (:func:`add_setting_flags` in :mod:`kosti.vision.cli`);
* the dashboard's thresholds and the runner's :class:`kosti.vision.runner.Tuning` (:data:`LIVE_THRESHOLDS`: their
  names, defaults and ranges);
* the range checks (:func:`check_params`, :func:`value_problem`) the config and the flags apply; code that builds
  params itself may call :func:`check_params` (the constructors do not re-check).

``tests/vision/test_params.py`` compares the config models, the CLI flags and the dataclasses field by field.
The reader's defaults are the shipped models' operating point (:mod:`kosti.models`, chosen by
``benchmarks/select_operating_point.py`` and ``benchmarks/select_zoom.py``); the settle detector's were tuned on
the virtual table and folder replays of the shared photos (:mod:`kosti.vision.settle`).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import textwrap
from dataclasses import dataclass
from typing import Any

from kosti.models import (
    DEFAULT_CONF,
    DEFAULT_DIM_GAIN,
    DEFAULT_IOU,
    DEFAULT_NESTED_FRAC,
    DEFAULT_NOT_DIE_PROB,
    DEFAULT_VALUE_CONF,
    DEFAULT_VERIFY_CONF,
    DEFAULT_VERIFY_ONE_CONF,
    DEFAULT_VERIFY_PROB,
    DEFAULT_WEAK_NESTED_FRAC,
    DEFAULT_ZOOM_BELOW,
    DEFAULT_ZOOM_IMGSZ,
    DEFAULT_ZOOM_MAX,
)

#: Most gain a dim frame is brightened by (:mod:`kosti.vision.exposure`: noise grows with the gain).
MAX_EXPOSURE_GAIN = 2.5
#: The settle detector's default still time (seconds): a die rolling on felt stops within a few tenths of a
#: second; shorter times fire on the pause of a bounce (:mod:`kosti.vision.settle`).
STILL_S = 0.4
#: Default changed-pixel fraction (of the 160 px wide grey image) above which the table is moving, and below which
#: a frame counts as still (the gap is the hysteresis). Tuned on the virtual table and folder replays of the shared
#: photos with added sensor noise (:mod:`kosti.vision.settle`).
MOTION_FRACTION = 0.004
STILL_FRACTION = 0.0015
#: Per-die rest (:meth:`kosti.vision.settle.SettleDetector.set_focus`): the share of a die's box that may change
#: while it keeps its place, and the margin (share of its side) the box is grown by (:mod:`kosti.vision.settle`).
DIE_FRACTION = 0.15
DIE_MARGIN = 0.25

#: Backends of :class:`kosti.vision.reader.DiceReader` (``auto``: by each model path).
BACKEND_NAMES = ("auto", "onnx", "ncnn", "ultralytics")


class SettingError(ValueError):
    """A setting outside its declared bounds (CLI exit code 2). The message names the setting and the bounds."""

    exit_code = 2


def setting(default: Any, doc: str, *, unit: str = "", ge: float | None = None, gt: float | None = None,
            le: float | None = None, lt: float | None = None, multiple_of: int | None = None,
            off: float | None = None, choices: tuple[str, ...] = (), config: bool = True,
            flag: bool = True, aliases: tuple[str, ...] = ()) -> Any:
    """One declared setting: a dataclass field whose ``metadata`` holds what the config, the CLI and the checks use.

    Args:
        default: the default value (``None`` only where the docs say what ``None`` means).
        doc: one description, for the config file's comment and the flag's help (plain sentences).
        unit: ``"s"``, ``"px"``, ``"share"`` (0–1 of something), ``"prob"`` (a probability), ``"x"`` (a gain) or "".
        ge, gt, le, lt: the bounds (≥, >, ≤, <); ``None`` = unbounded on that side.
        multiple_of: the file and the flags ask a multiple of this (the reader itself rounds up to its stride).
        off: a value outside the bounds that turns the feature off (``dim_gain = 0``).
        choices: the allowed strings of a text setting.
        config: whether ``kosti.toml`` has a key for it (a setting only code and benchmarks change has none).
        flag: whether ``kosti read`` / ``kosti eval`` have a flag for it (``--`` + the name with dashes).
        aliases: older key names the config file still reads.
    """
    meta = {"doc": " ".join(doc.split()), "unit": unit, "ge": ge, "gt": gt, "le": le, "lt": lt,
            "multiple_of": multiple_of, "off": off, "choices": choices, "config": config, "flag": flag,
            "aliases": aliases}
    return dataclasses.field(default=default, metadata=meta)


def bounds_text(meta: dict[str, Any]) -> str:
    """The bounds of a setting's ``metadata`` in words, e.g. ``"> 0 and ≤ 1"`` or ``"0 (off), or ≥ 1 and < 2.5"``."""
    parts = [f"{op} {meta[k]:g}" for k, op in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<"))
             if meta.get(k) is not None]
    text = " and ".join(parts)
    if meta.get("multiple_of"):
        text += f", a multiple of {meta['multiple_of']}"
    if meta.get("choices"):
        text = "one of " + ", ".join(meta["choices"])
    if meta.get("off") is not None:
        text = f"{meta['off']:g} (off), or {text}"
    return text


def value_problem(name: str, value: Any, meta: dict[str, Any], *, step: bool = True) -> str | None:
    """Why ``value`` is not allowed for the setting ``name`` with ``metadata`` ``meta`` (one line), or ``None``.

    ``step=False`` skips ``multiple_of`` (the reader rounds its sizes up to the detector's stride).
    """
    if value is None:
        return None
    if meta.get("choices"):
        return None if value in meta["choices"] else f"{name} must be {bounds_text(meta)}, got {value!r}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if meta.get("off") is not None and value == meta["off"]:
        return None
    v = float(value)
    ok = not math.isnan(v) and all((
        meta.get("ge") is None or v >= meta["ge"], meta.get("gt") is None or v > meta["gt"],
        meta.get("le") is None or v <= meta["le"], meta.get("lt") is None or v < meta["lt"],
        not step or not meta.get("multiple_of") or v % meta["multiple_of"] == 0))
    return None if ok else f"{name} must be {bounds_text(meta)}, got {value:g}"


def check_params(params: Any, *, step: bool = True) -> None:
    """Check every field of a :class:`ReaderParams` / :class:`SettleParams` against its declared bounds.

    Raises:
        SettingError: the first field outside its bounds, named with its bounds.
    """
    for f in dataclasses.fields(params):
        problem = value_problem(f.name, getattr(params, f.name), dict(f.metadata), step=step)
        if problem:
            raise SettingError(problem)


@dataclass(frozen=True)
class ReaderParams:
    """The dice reader's settings (:class:`kosti.vision.reader.DiceReader`); the model files are not among them.

    The bounds are what ``kosti.toml`` and the flags of ``kosti read`` / ``kosti eval`` accept; the reader's own
    checks (:func:`kosti.vision.reader._check_thresholds`) are the physical ones, no narrower (code and benchmarks
    may read at ``conf`` 0.001, or round a zoom side up to the stride).

    Defaults: the shipped models' operating point (:mod:`kosti.models`). ``temperature`` and ``views`` ``None``:
    from ``reader.json`` beside the classifier.
    """

    conf: float = setting(DEFAULT_CONF, """Detector confidence threshold (0–1): boxes scoring above it are dice.""",
                          unit="prob", gt=0.0, lt=1.0)
    iou: float = setting(DEFAULT_IOU, """Overlap (IoU, 0–1) above which two boxes are taken as the same die and the
        weaker one is dropped (non-maximum suppression).""", unit="share", gt=0.0, le=1.0)
    value_conf: float = setting(DEFAULT_VALUE_CONF, """Minimum face probability (0–1); below it a die is shown as
        uncertain and the throw asks for a check.""", unit="prob", ge=0.0, le=1.0)
    tta: bool = setting(True, """Read each die in several views and average (more accurate; 2-4x the face-classifier
        time): upright and mirrored for the shipped classifier, four 90° turns for one trained before v1.3
        (reader.json "views").""")
    verify_conf: float = setting(DEFAULT_VERIFY_CONF, """Second look: a box scoring above verify_conf (but not above
        conf) is a die only if the face classifier confirms it (see verify_prob). verify_conf = conf turns the second
        look off.""", unit="prob", ge=0.0, le=1.0)
    verify_prob: float = setting(DEFAULT_VERIFY_PROB, """Face probability (0–1) with which the classifier confirms
        such a weak box.""", unit="prob", ge=0.0, le=1.0)
    verify_one_conf: float = setting(DEFAULT_VERIFY_ONE_CONF, """A weak box read as a 1 is confirmed only when the
        detector scored it above this: number tokens, coins and buttons read as a lone pip. 0 turns the rule off.""",
        unit="prob", ge=0.0, le=1.0)
    not_die_prob: float = setting(DEFAULT_NOT_DIE_PROB, """A box the face classifier reads as "not a die" (class x)
        with at least this probability is not a die, whatever the detector scored it: the dark corner of a noisy
        webcam frame. 1 turns the rule off.""", unit="prob", gt=0.0, le=1.0)
    dim_gain: float = setting(DEFAULT_DIM_GAIN, f"""A frame so dim that it would take a gain above this to bring its
        brightest parts to a normal level is read brightened by that gain (at most {MAX_EXPOSURE_GAIN:g}): a table
        under a dim lamp. 0 turns it off; 1 to {MAX_EXPOSURE_GAIN:g}.""", unit="x", ge=1.0, lt=MAX_EXPOSURE_GAIN,
        off=0.0)
    zoom_below: float = setting(DEFAULT_ZOOM_BELOW, """Zoom for small dice: when the dice found are smaller than this
        (median side, in pixels of the detector's 640 px input; for a frame larger than zoom_imgsz, the lower quartile:
        its far dice) or only weak candidates were found, the frame is read again with the detector at zoom_imgsz; the
        result is that read's dice plus any first-read die it missed (costs a second, larger pass on such frames
        only). The default 20 (dice under 40 px on a 1280x720 frame) was chosen on validation photos; 0 turns it off.
        Left at the defaults, the zoom is off for a model that cannot zoom; a value other than the default asks for
        it.""", unit="px", ge=0.0, le=640.0)
    zoom_imgsz: int = setting(DEFAULT_ZOOM_IMGSZ, """Detector input side of the zoomed read: pixels, a multiple of 32
        from 672 to 2048 (above the detector's own 640).""", unit="px", ge=672, le=2048, multiple_of=32)
    zoom_max: int = setting(DEFAULT_ZOOM_MAX, """The largest detector input side of the zoomed read: a frame larger
        than zoom_imgsz whose dice are small (a 1080p camera or a phone's photo of a whole table) is read at the side
        that makes its dice about 32 px, up to its own longer side and this; pixels, a multiple of 32 from 672 to 4096,
        at least zoom_imgsz (left at its default, it follows a larger zoom_imgsz up). A larger side finds farther dice
        and takes longer: the detector's time grows with the square of the side (1280: about 4x the 640 px read, on
        such frames only).""", unit="px", ge=672, le=4096, multiple_of=32)
    backend: str = setting("auto", """Inference runtime: "onnx" (ONNX Runtime), "ncnn" (fastest on a Raspberry Pi) or
        "ultralytics" (.pt files, needs the train extra); "auto" picks by each model path (.onnx: onnx, an NCNN
        export folder: ncnn, else ultralytics).""", choices=BACKEND_NAMES, config=False, flag=False)
    threads: int = setting(1, """CPU threads per model (1–16; a Raspberry Pi's 4 cores are shared by two models and
        the camera).""", ge=1, le=16)
    max_det: int = setting(300, "Most dice per frame the detector reports.", ge=1, config=False, flag=False)
    max_verify: int = setting(32, """Most weak boxes given a second look per frame (the best-scoring ones; bounds the
        classifier's time on cluttered frames).""", ge=0, config=False, flag=False)
    nested_frac: float = setting(DEFAULT_NESTED_FRAC, """A die box covered this much (share of its own area) by a
        stronger die box is the same die again and is dropped; 1 turns it off.""", unit="share", gt=0.0, le=1.0,
        config=False, flag=False)
    weak_nested_frac: float = setting(DEFAULT_WEAK_NESTED_FRAC, """The same for a weak box (score at or below conf,
        kept by the second look); a value above nested_frac is capped at it.""", unit="share", gt=0.0, le=1.0,
        config=False, flag=False)
    temperature: float | None = setting(None, """Softmax temperature of the classifier (p ∝ p_raw^(1/T)); None: from
        reader.json beside the classifier, else 1.""", gt=0.0, config=False, flag=False)
    views: str | None = setting(None, """The classifier's test-time views: "turns" (four 90° rotations) or "upright"
        (the crop and its mirror image); None: from reader.json beside the classifier, else "turns".""",
        choices=("turns", "upright"), config=False, flag=False)

    def zoom_asked(self) -> bool:
        """Whether a zoom setting differs from its default: a model that cannot zoom is then refused, while the
        default zoom is silently off for it (:class:`kosti.vision.reader.DiceReader`)."""
        base = ReaderParams()
        return any(getattr(self, k) != getattr(base, k) for k in ("zoom_below", "zoom_imgsz", "zoom_max"))

    def effective_zoom_max(self) -> int:
        """``zoom_max``, raised to ``zoom_imgsz`` when left at its default below it (px)."""
        return max(self.zoom_max, self.zoom_imgsz) if self.zoom_max == DEFAULT_ZOOM_MAX else self.zoom_max


@dataclass(frozen=True)
class SettleParams:
    """The settle detector's settings (:class:`kosti.vision.settle.SettleDetector`): when the table is at rest.

    The bounds are what ``kosti.toml``, the dashboard and the flags accept; the detector's own checks are the
    physical ones (it also takes a still time of 0 s, which tests use to read at once).
    """

    still_s: float = setting(STILL_S, """A throw is read once the table has been still this long (seconds, > 0,
        ≤ 10).""", unit="s", gt=0.0, le=10.0, aliases=("still_time_s",))
    motion_fraction: float = setting(MOTION_FRACTION, """Fraction (0–1) of the (downscaled) frame's pixels that must
        change between frames to count as motion.""", unit="share", gt=0.0, le=1.0, aliases=("motion_threshold",))
    still_fraction: float = setting(STILL_FRACTION, """Fraction below which a frame counts as still; must not exceed
        motion_fraction (hysteresis).""", unit="share", gt=0.0, le=1.0, aliases=("still_threshold",))
    width: int = setting(160, "Width in pixels of the downscaled image (height keeps the aspect ratio).", unit="px",
                         ge=8, config=False)
    blur_sigma: float = setting(1.0, """Gaussian blur sigma in small-image pixels (suppresses sensor noise and JPEG
        ringing).""", unit="px", ge=0.0, config=False)
    diff_threshold: int = setting(14, "Gray-level change (0–255) for a pixel to count as changed.", ge=1, le=255,
                                  config=False)
    drift_fraction: float = setting(0.003, """Changed fraction against the frame at which the table went still above
        which it is moving again (0.003 ≈ half a die's area at 720p).""", unit="share", ge=0.0, le=1.0,
        config=False)
    compensate: bool = setting(True, """Estimate and remove the camera's own motion and exposure changes; False =
        the fixed-camera detector.""", config=False)
    max_shift: float = setting(2.0, """Largest camera shift per frame believed, in small-image px (2 px at 160 px
        wide = 16 px at 1280).""", unit="px", ge=0.0, config=False)
    dim_gain: float = setting(DEFAULT_DIM_GAIN, """A frame that takes a gain above this to look normally lit has its
        motion measured brightened by that gain; the reader's own rule and default; 0 = off.""", unit="x", ge=1.0,
        le=MAX_EXPOSURE_GAIN, off=0.0, config=False)
    die_fraction: float = setting(DIE_FRACTION, """Per-die rest: a die has kept its place while at most this share of
        its box changed.""", unit="share", gt=0.0, le=1.0, config=False)
    die_margin: float = setting(DIE_MARGIN, "Per-die rest: the margin (share of a die's side) its box is grown by.",
                                unit="share", ge=0.0, config=False)


def meta(cls: type, name: str) -> dict[str, Any]:
    """The declared ``metadata`` of the setting ``name`` of ``cls`` (a :class:`ReaderParams` / :class:`SettleParams`).

    Raises:
        KeyError: no such setting.
    """
    for f in dataclasses.fields(cls):
        if f.name == name:
            return {**f.metadata, "default": f.default}
    raise KeyError(name)


#: The thresholds a table changes while it runs (the dashboard's Settings, ``PUT /api/settings``
#: :class:`kosti.dashboard.schemas.Thresholds`, the stored ``thresholds`` row and the runner's
#: :class:`kosti.vision.runner.Tuning`): each name with the declaration that holds its default, unit and bounds.
#: ``still_s`` is accepted up to the declared 10 s there too (the dashboard capped it at 5 s before issue 39).
LIVE_THRESHOLDS: dict[str, type] = {"conf": ReaderParams, "value_conf": ReaderParams, "still_s": SettleParams,
                                    "motion_fraction": SettleParams, "still_fraction": SettleParams}


def live_threshold_problem(name: str, value: Any) -> str | None:
    """Why ``value`` is no valid live threshold ``name`` (a key of :data:`LIVE_THRESHOLDS`): not a number, or
    outside the declared bounds (one line); ``None`` when it is valid. An unknown name is a problem too."""
    if name not in LIVE_THRESHOLDS:
        return f"unknown threshold {name!r}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{name} must be a number, got {value!r}"
    return value_problem(name, value, meta(LIVE_THRESHOLDS[name], name))


def live_threshold_field(name: str) -> Any:
    """The pydantic ``Field`` of the live threshold ``name`` in a request that may leave it out: default ``None``
    (unchanged), the declared bounds and description (:data:`LIVE_THRESHOLDS`)."""
    from pydantic import Field

    m = meta(LIVE_THRESHOLDS[name], name)
    kw: dict[str, Any] = {k: m[k] for k in ("ge", "gt", "le", "lt") if m.get(k) is not None}
    return Field(None, description=f"{m['doc']} ({bounds_text(m)}; default {m['default']:g})", **kw)


def config_field(cls: type, name: str) -> Any:
    """The pydantic ``Field`` of the setting ``name`` of ``cls``: its default, bounds (the ``off`` value allowed by
    the section's validator), ``multiple_of``, older key names and its description."""
    from pydantic import AliasChoices, Field

    m = meta(cls, name)
    kw: dict[str, Any] = {k: m[k] for k in ("ge", "gt", "le", "lt", "multiple_of")
                          if m.get(k) is not None and m.get("off") is None}
    if m["aliases"]:
        kw["validation_alias"] = AliasChoices(name, *m["aliases"])
    return Field(m["default"], description=textwrap.fill(m["doc"], 110, break_on_hyphens=False), **kw)


def _flag_type(name: str, m: dict[str, Any]) -> Any:
    """An argparse ``type`` that parses a number and checks it against the setting's bounds."""
    whole = isinstance(m["default"], int) and not isinstance(m["default"], bool)

    def parse(text: str) -> float | int:
        try:
            v: float | int = int(text) if whole else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {'an integer' if whole else 'a number'}: {text!r}") from None
        problem = value_problem(name, v, m)
        if problem:
            raise argparse.ArgumentTypeError(problem.replace(f"{name} must be", "must be"))
        return v

    parse.__name__ = "integer" if whole else "number"
    return parse


def add_setting_flags(parser: argparse.ArgumentParser, cls: type) -> None:
    """Add one flag per setting of ``cls`` with ``flag=True``: ``--NAME-WITH-DASHES`` (``--no-NAME`` for a setting
    that is on by default), its default, bounds and help from the declaration (``dest`` is the field's name)."""
    for f in dataclasses.fields(cls):
        m = {**f.metadata, "default": f.default}
        if not m["flag"]:
            continue
        dashed = f.name.replace("_", "-")
        if isinstance(f.default, bool):
            parser.add_argument(f"--no-{dashed}", dest=f.name, action="store_false", default=f.default,
                                help=f"{m['doc']} (--no-{dashed}: off)")
            continue
        metavar = "PX" if m["unit"] == "px" else "N" if isinstance(f.default, int) else "FLOAT"
        parser.add_argument(f"--{dashed}", dest=f.name, type=_flag_type(f.name, m), default=f.default,
                            metavar=metavar, help=f"{m['doc']} ({bounds_text(m)}; default {f.default:g})"
                            .replace("%", "%%"))


def params_from_args(cls: type, args: argparse.Namespace, **more: Any) -> Any:
    """A ``cls`` instance from the flags :func:`add_setting_flags` added (others keep their defaults) and ``more``."""
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(cls) if hasattr(args, f.name)}
    return cls(**{**given, **more})
