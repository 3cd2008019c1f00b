"""The sections of the kosti configuration: one pydantic model per ``[section]`` of ``kosti.toml``.

Each knob has one name from the TOML file to the constructor it feeds (``[settle] still_s`` is
``SettleDetector(still_s=…)``, ``[reader] conf`` is ``DiceReader(conf=…)``); its documentation is the
field's ``description``, which is also the comment above the key in the generated file
(:func:`kosti.config_files.render_config`, ``deploy/kosti.toml``). A field's ``json_schema_extra``
``{"example": …}`` is the commented-out example written for an unset (``None``) key.
"""

from __future__ import annotations

import importlib.util
import ipaddress
import json
import re
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, create_model, field_validator, model_validator
from pydantic_settings import NoDecode

from kosti.data_dir import default_data_dir
from kosti.engine.names import check_player_names
from kosti.models import (
    DEFAULT_CONF,
    DEFAULT_DIM_GAIN,
    DEFAULT_IOU,
    DEFAULT_NOT_DIE_PROB,
    DEFAULT_VALUE_CONF,
    DEFAULT_VERIFY_CONF,
    DEFAULT_VERIFY_ONE_CONF,
    DEFAULT_VERIFY_PROB,
    DEFAULT_ZOOM_BELOW,
    DEFAULT_ZOOM_IMGSZ,
    DEFAULT_ZOOM_MAX,
    EARLIER_OPERATING_POINTS,
    EARLIER_ZOOM,
)
from kosti.registry import SHIPPED, Registry, RegistryError
from kosti.vision.frame_source import SourceError
from kosti.vision.settle import MOTION_FRACTION, STILL_FRACTION
from kosti.vision.source_spec import parse_source_spec

_FULL_FRAME: list[tuple[float, float]] = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


Point = tuple[Annotated[float, Field(ge=0.0, le=1.0)], Annotated[float, Field(ge=0.0, le=1.0)]]


def _doc(text: str) -> str:
    """A field description written as indented source lines → the text (line breaks and the indentation
    beyond the common one kept)."""
    return textwrap.dedent(text).strip("\n").rstrip()


class SourceSettings(_Section):
    """Camera/frame source (``[source]``); the fields map onto :func:`kosti.vision.sources.open_source`."""

    spec: str = Field("picamera", description=_doc("""
        Camera: "picamera" (Raspberry Pi camera), a device index such as "0" (USB webcam /dev/video0),
        an rtsp:// or http:// URL, a video file, a folder of frames (a video saved as images, in name order; fps below),
        or "virtual" (built-in virtual table)."""))
    width: Annotated[int, Field(ge=160, le=4096)] = Field(1280, description=_doc("""
        Requested frame width in pixels (160–4096); the camera may round it to a mode it supports."""))
    height: Annotated[int, Field(ge=120, le=3040)] = Field(720, description="Requested frame height in pixels (120–3040).")
    fps: Annotated[float, Field(gt=0.0, le=120.0)] = Field(30.0, description=_doc("""
        Requested frame rate (frames per second, > 0 and ≤ 120)."""))
    rotate: Literal[0, 90, 180, 270] = Field(0, description=_doc("""
        Turn every frame clockwise by this many degrees before anything reads it (0, 90, 180 or 270): a camera
        mounted sideways or upside down, a phone on its side. With a camera at an angle, turn the frames until the
        far side of the table is at the top: the face classifier reads a die seen from the side by the face at the
        top of the die. The zones are drawn on the turned frame."""))

    @field_validator("rotate", mode="before")
    @classmethod
    def _rotate_int(cls, v: Any) -> Any:  # $KOSTI_SOURCE__ROTATE=90 arrives as text; 90.0 is 90
        from kosti.vision.frame_source import loose_rotation

        return loose_rotation(v)

    @field_validator("spec", mode="before")
    @classmethod
    def _spec_str(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int) and not isinstance(v, bool) else v

    @field_validator("spec")
    @classmethod
    def _spec_known(cls, v: str) -> str:
        s = v.strip()
        try:
            spec = parse_source_spec(s)  # the one grammar; its message names the spec and the accepted forms
        except SourceError as exc:
            raise ValueError(str(exc)) from None
        if spec.kind == "device" and isinstance(spec.target, str) and not Path(spec.target).exists():
            raise ValueError(f"no such device {s!r} (is the camera plugged in?)")
        return s

    @property
    def kind(self) -> str:
        """``picamera``, ``device``, ``url``, ``virtual``, ``folder``, ``photo`` or ``video``
        (:class:`kosti.vision.source_spec.SourceSpec`)."""
        try:
            return parse_source_spec(self.spec).kind
        except SourceError:  # the file or folder checked at start has gone since: it was one of those
            return "video"

    def source_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``kosti.vision.sources.open_source(self.spec, **kwargs)``.

        Live cameras get the requested size and rate (``PicameraSource``: ``size=(w, h)``, ``fps``;
        ``OpenCVSource``: ``width``, ``height``, ``fps``); files, folders and the virtual table play at
        their own size and rate, so they get none, but for a folder of frames: the rate (it has none of its own).
        ``rotate`` is not among them: the dashboard applies it as a table setting (``kosti run``), so that the zones
        it keeps turn with the picture; ``kosti capture`` opens its source with it.
        """
        if self.kind == "picamera":
            return {"size": (self.width, self.height), "fps": self.fps}
        if self.kind in ("device", "url"):
            return {"width": self.width, "height": self.height, "fps": self.fps}
        if self.kind == "folder":  # a folder of frames does not say its rate: the configured one
            return {"fps": self.fps}
        return {}


def _polygon_problem(points: list[tuple[float, float]]) -> str | None:
    """Why ``points`` is not a usable zone polygon, or ``None``: the one rule, :func:`kosti.vision.zones.polygon_problem`."""
    from kosti.vision.zones import polygon_problem

    return polygon_problem(points)


class ZonesSettings(_Section):
    """Table zones (``[zones]``) as polygons of ``[x, y]`` points normalised to the frame (0–1, origin top-left).

    The set-aside area may lie inside the roll area: a die is tested against it first
    (:class:`kosti.vision.zones.Zones`), as on the dashboard's calibration page, where they are best drawn
    (docs/setup.md).
    """

    roll_area: list[Point] = Field(default_factory=lambda: list(_FULL_FRAME), description=_doc("""
        Polygons of [x, y] points normalised to the frame (0–1, origin top-left). Draw them on the dashboard
        (Calibrate) instead of by hand. roll_area: where thrown dice are read (default: the whole frame)."""))
    set_aside: list[Point] = Field(default_factory=list, description=_doc("""
        set_aside: where kept dice are put aside between throws (отложенные кости); [] = no such zone."""))

    @field_validator("roll_area")
    @classmethod
    def _roll_ok(cls, v: list[tuple[float, float]]) -> list[tuple[float, float]]:
        problem = _polygon_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("set_aside")
    @classmethod
    def _aside_ok(cls, v: list[tuple[float, float]]) -> list[tuple[float, float]]:
        problem = _polygon_problem(v) if v else None
        if problem:
            raise ValueError(problem)
        return v


class SettleSettings(_Section):
    """When the dice count as settled (``[settle]``): the keyword arguments of
    :class:`kosti.vision.settle.SettleDetector`, under the same names.

    Files written before the names were unified spell them ``still_time_s``, ``motion_threshold`` and
    ``still_threshold``; those keys are still read.
    """

    still_s: Annotated[float, Field(gt=0.0, le=10.0)] = Field(
        0.4, validation_alias=AliasChoices("still_s", "still_time_s"), description=_doc("""
        A throw is read once the table has been still this long (seconds, > 0, ≤ 10)."""))
    motion_fraction: Annotated[float, Field(gt=0.0, le=1.0)] = Field(
        MOTION_FRACTION, validation_alias=AliasChoices("motion_fraction", "motion_threshold"), description=_doc("""
        Fraction (0–1) of the (downscaled) frame's pixels that must change between frames to count as motion."""))
    still_fraction: Annotated[float, Field(gt=0.0, le=1.0)] = Field(
        STILL_FRACTION, validation_alias=AliasChoices("still_fraction", "still_threshold"), description=_doc("""
        Fraction below which a frame counts as still; must not exceed motion_fraction (hysteresis)."""))

    @model_validator(mode="after")
    def _hysteresis(self) -> SettleSettings:
        if self.still_fraction > self.motion_fraction:
            raise ValueError(
                f"settle.still_fraction: {self.still_fraction} must not exceed "
                f"settle.motion_fraction = {self.motion_fraction} (the gap is the hysteresis)")
        return self

    def detector_kwargs(self) -> dict[str, float]:
        """Keyword arguments for ``kosti.vision.settle.SettleDetector(**kwargs)``: the fields as they are."""
        return self.model_dump()


#: Reader backend → (the package it imports, how to install it): ``kosti config check`` refuses a backend
#: whose runtime is missing, rather than ``kosti run`` failing later.
_RUNTIME_PACKAGES = {
    "ncnn": ("ncnn", "pip install ncnn (a kosti dependency)"),
    "ultralytics": ("ultralytics", "pip install 'kosti[train]'"),
}


class ReaderSettings(_Section):
    """Dice reader (``[reader]``): which models, which runtime, which thresholds; the thresholds are
    :class:`kosti.vision.reader.DiceReader`'s keyword arguments under the same names. Set either ``model``
    or the ``detector``/``classifier`` paths, not both; the paths must exist. The threshold defaults are the
    shipped models' operating point (:data:`kosti.models.DEFAULT_CONF` and its neighbours)."""

    model: str = Field("active", description=_doc("""
        Models: "active" (the registry's active version; `kosti models use VERSION` switches it live),
        "shipped" (the weights installed with kosti), or a version listed by `kosti models list`."""))
    detector: Path | None = Field(None, json_schema_extra={"example": "/path/to/dice_det.onnx"}, description=_doc("""
        Or explicit model paths instead of `model` (ONNX files; NCNN export folders with backend = "ncnn")."""))
    classifier: Path | None = Field(None, json_schema_extra={"example": "/path/to/dice_cls.onnx"},
                                    description="The face classifier's file or folder, as detector.")
    conf: Annotated[float, Field(gt=0.0, lt=1.0)] = Field(DEFAULT_CONF, description=_doc("""
        Detector confidence threshold (0–1): boxes scoring above it are dice."""))
    iou: Annotated[float, Field(gt=0.0, le=1.0)] = Field(DEFAULT_IOU, description=_doc("""
        Overlap (IoU, 0–1) above which two boxes are taken as the same die and the weaker one is dropped."""))
    value_conf: Annotated[float, Field(ge=0.0, le=1.0)] = Field(DEFAULT_VALUE_CONF, description=_doc("""
        Minimum face probability (0–1); below it a die is shown as uncertain and the throw asks for a check."""))
    tta: bool = Field(True, description=_doc("""
        Read each die in several views and average (more accurate; 2-4x the face-classifier time): upright and
        mirrored for the shipped classifier, four 90° turns for one trained before v1.3 (reader.json "views")."""))
    verify_conf: Annotated[float, Field(ge=0.0, le=1.0)] = Field(DEFAULT_VERIFY_CONF, description=_doc("""
        Second look: a box scoring above verify_conf (but not above conf) is a die only if the face
        classifier confirms it (see verify_prob). verify_conf = conf turns the second look off."""))
    verify_prob: Annotated[float, Field(ge=0.0, le=1.0)] = Field(DEFAULT_VERIFY_PROB, description=_doc("""
        Face probability (0–1) with which the classifier confirms such a weak box."""))
    verify_one_conf: Annotated[float, Field(ge=0.0, le=1.0)] = Field(DEFAULT_VERIFY_ONE_CONF, description=_doc("""
        A weak box read as a 1 is confirmed only when the detector scored it above this: number tokens,
        coins and buttons read as a lone pip. 0 turns the rule off."""))
    not_die_prob: Annotated[float, Field(gt=0.0, le=1.0)] = Field(DEFAULT_NOT_DIE_PROB, description=_doc("""
        A box the face classifier reads as "not a die" (class x) with at least this probability is not a die,
        whatever the detector scored it: the dark corner of a noisy webcam frame. 1 turns the
        rule off."""))
    dim_gain: Annotated[float, Field(ge=0.0, lt=2.5)] = Field(DEFAULT_DIM_GAIN, description=_doc("""
        A frame so dim that it would take a gain above this to bring its brightest parts to a normal level
        is read brightened by that gain (at most 2.5): a table under a dim lamp. 0 turns it off; 1 to 2.5."""))
    zoom_below: Annotated[float, Field(ge=0.0, le=640.0)] = Field(DEFAULT_ZOOM_BELOW, description=_doc("""
        Zoom for small dice: when the dice found are smaller than this (median side, in pixels of the
        detector's 640 px input; for a frame larger than zoom_imgsz, the lower quartile: its far dice) or
        only weak candidates were found, the frame is read again with the
        detector at zoom_imgsz; the result is that read's dice plus any first-read die it missed (costs a
        second, larger pass on such frames only). The default 20 (dice under 40 px on a 1280x720 frame)
        was chosen on validation photos; 0 turns it off."""))
    zoom_imgsz: Annotated[int, Field(ge=672, le=2048, multiple_of=32)] = Field(DEFAULT_ZOOM_IMGSZ, description=_doc("""
        Detector input side of the zoomed read: pixels, a multiple of 32 from 672 to 2048 (above the
        detector's own 640)."""))
    zoom_max: Annotated[int, Field(ge=672, le=4096, multiple_of=32)] = Field(DEFAULT_ZOOM_MAX, description=_doc("""
        The largest detector input side of the zoomed read: a frame larger than zoom_imgsz whose dice are
        small (a 1080p camera or a phone's photo of a whole table) is read at the side that makes its dice
        about 32 px, up to its own longer side and this; pixels, a multiple of 32 from 672 to 4096, at least
        zoom_imgsz. A larger side finds farther dice and takes longer: the detector's time grows with the
        square of the side (1280: about 4x the 640 px read, on such frames only)."""))
    backend: Literal["onnx", "ncnn", "ultralytics"] = Field("onnx", description=_doc("""
        Inference runtime: "onnx" (ONNX Runtime), "ncnn" (fastest on a Raspberry Pi) or "ultralytics"
        (.pt files, needs the train extra); the runtime's package must be installed."""))
    threads: Annotated[int, Field(ge=1, le=16)] = Field(1, description=_doc("""
        CPU threads per model (1–16; a Raspberry Pi's 4 cores are shared by two models and the camera)."""))

    @field_validator("dim_gain")
    @classmethod
    def _dim_gain_off_or_a_gain(cls, v: float) -> float:
        if 0.0 < v < 1.0:
            raise ValueError(f"must be 0 (off) or from 1 to below 2.5, got {v}")
        return v

    @field_validator("model")
    @classmethod
    def _model_known(cls, v: str) -> str:
        v = v.strip()
        if v in ("active", SHIPPED):
            return v
        known = Registry().version_names()
        if v not in known:
            raise ValueError(f"unknown model version {v!r}; known: active, {', '.join(known)}")
        return v

    @model_validator(mode="after")
    def _earlier_operating_point(self) -> ReaderSettings:
        """An earlier reader's whole operating point, as ``kosti config init`` wrote it (v0.3: conf 0.5,
        value_conf 0.4, verify_prob 0.98; v1.0: conf 0.5, value_conf 0.7, verify_prob 0.95; v1.1: conf 0.45,
        value_conf 0.7, verify_prob 0.95, verify_one_conf 0.2; v1.2: conf 0.5, value_conf 0.7, verify_prob 0.95,
        verify_one_conf 0.1; :data:`kosti.models.EARLIER_OPERATING_POINTS`),
        with the shipped models: an old default, not a choice — when the file sets all of that point's keys to
        its values, those keys take today's defaults and count as unset (a table installed before the reader changed then reads at today's own operating point). Only in
        a file that version could have written: one that also sets a threshold the old point does not hold
        (``verify_one_conf`` is new in v1.1, which ``kosti config init`` writes since) was written later, so
        its thresholds are the user's even when they equal an old point."""
        if self.detector or self.classifier:
            return self  # own model files: their thresholds are the user's
        later_keys = {k for point in EARLIER_OPERATING_POINTS for k in point}
        for old in EARLIER_OPERATING_POINTS:
            if (later_keys - old.keys()) & self.model_fields_set:
                continue  # a threshold that version did not write: a later file
            if self._holds(old):  # the whole old point (equal to today's or not: unset either way)
                self._unset(old)
                break
        return self

    def _holds(self, values: dict[str, float]) -> bool:
        """Whether the file sets every key of ``values`` to its value."""
        return values.keys() <= self.model_fields_set and all(getattr(self, k) == v for k, v in values.items())

    def _unset(self, keys: Iterable[str]) -> None:
        """Give ``keys`` their defaults, as if the file did not set them."""
        for k in keys:
            object.__setattr__(self, k, type(self).model_fields[k].default)
            self.__pydantic_fields_set__.discard(k)

    @model_validator(mode="after")
    def _earlier_zoom(self) -> ReaderSettings:
        """The zoom as ``kosti config init`` wrote it from v1.0 to v1.2 (``zoom_below = 0.0``, ``zoom_imgsz =
        960``: off; :data:`kosti.models.EARLIER_ZOOM`), with the shipped models: an old default, not a choice —
        when the file sets both keys to those values, both take today's defaults and count as unset. To keep the
        zoom off, set ``zoom_below = 0`` with any other ``zoom_imgsz`` (``kosti config init`` writes today's 800),
        or ``zoom_below = 0`` alone."""
        if self.detector or self.classifier:
            return self  # own model files: their settings are the user's
        if self._holds(EARLIER_ZOOM):
            self._unset(EARLIER_ZOOM)
        return self

    @model_validator(mode="after")
    def _zoom_max_ok(self) -> ReaderSettings:
        if "zoom_max" in self.model_fields_set and self.zoom_below > 0 and self.zoom_max < self.zoom_imgsz:
            raise ValueError(f"zoom_max ({self.zoom_max}) must be at least zoom_imgsz ({self.zoom_imgsz})")
        return self

    @model_validator(mode="after")
    def _paths_ok(self) -> ReaderSettings:
        if (self.detector or self.classifier) and self.model != "active":
            raise ValueError("reader.model: set either model or the detector/classifier paths, not both")
        runtime = _RUNTIME_PACKAGES.get(self.backend)
        if runtime is not None and importlib.util.find_spec(runtime[0]) is None:
            raise ValueError(f"reader.backend: {self.backend!r} needs the {runtime[0]!r} package, which is not "
                             f"installed ({runtime[1]}); or use backend = \"onnx\"")
        want_dir = self.backend == "ncnn"
        for name in ("detector", "classifier"):
            p: Path | None = getattr(self, name)
            if p is None:
                continue
            if want_dir and not p.is_dir():
                raise ValueError(f"reader.{name}: {str(p)!r} is not an NCNN export folder (backend ncnn)")
            if not want_dir and not p.is_file():
                raise ValueError(f"reader.{name}: no such model file {str(p)!r}")
        if self.backend == "ncnn" and not (self.detector and self.classifier):
            try:  # the active version too: kosti run would otherwise fail where the check said fine
                reg = Registry()
                reg.paths(reg.active_version() if self.model == "active" else self.model).for_backend("ncnn")
            except RegistryError as exc:
                raise ValueError(f"reader.backend: {exc}; use backend = \"onnx\"") from exc
        return self

    def model_paths(self, registry: Registry | None = None) -> tuple[Path, Path, str]:
        """Resolve to ``(detector, classifier, version)`` for :attr:`backend`.

        Explicit paths win (a missing one comes from the registry's version); ``version`` is the registry
        version used, or ``"custom"`` when both paths are explicit. For ``model = "active"`` this reads
        the registry pointer now; poll :meth:`kosti.registry.Registry.change_token` to notice switches.
        Raises :class:`kosti.registry.RegistryError` when the version lacks this backend's files.
        """
        if self.detector and self.classifier:
            return self.detector, self.classifier, "custom"
        reg = registry or Registry()
        version = reg.active_version() if self.model == "active" else self.model
        det, cls = reg.paths(version).for_backend(self.backend)
        return self.detector or det, self.classifier or cls, version

    def reader_kwargs(self, registry: Registry | None = None) -> dict[str, Any]:
        """Keyword arguments for ``kosti.vision.reader.DiceReader(**kwargs)`` (models resolved now).

        ``backend`` maps 1:1 onto the reader's (``ncnn`` = :mod:`kosti.vision.ncnn_backend`, the ``ncnn``
        package alone, no torch).
        """
        det, cls, _version = self.model_paths(registry)
        return {"det_path": det, "cls_path": cls, "conf": self.conf, "iou": self.iou,
                "value_conf": self.value_conf, "tta": self.tta,
                "verify_conf": self.verify_conf, "verify_prob": self.verify_prob,
                "verify_one_conf": self.verify_one_conf, "not_die_prob": self.not_die_prob,
                "dim_gain": self.dim_gain,
                # the default zoom is the reader's own (None: off for a model that cannot zoom, not an error)
                "zoom_below": None if self.zoom_below == DEFAULT_ZOOM_BELOW else self.zoom_below,
                "zoom_imgsz": None if self.zoom_imgsz == DEFAULT_ZOOM_IMGSZ else self.zoom_imgsz,
                "zoom_max": None if self.zoom_max == DEFAULT_ZOOM_MAX else self.zoom_max,
                "backend": self.backend,
                "threads": self.threads}


class GameSettings(_Section):
    """Game (``[game]``): rule preset (``kosti rules``), parameter overrides and players."""

    preset: str = Field("classic", description=_doc("""
        Rule preset (`kosti rules` lists them): classic, farkle, ten_thousand, ..."""))
    players: Annotated[list[str], NoDecode] = Field(default_factory=list, description=_doc("""
        Players in seat order; [] = enter them on the dashboard. Names are unique (ignoring case), at most
        40 characters each, at most 12 players (kosti.engine.names)."""))
    overrides: dict[str, Any] = Field(default_factory=dict, description=_doc("""
        Rule parameter overrides (names as in `kosti rules --json`), as tables, for example:
          [game.overrides.opening]
          threshold = 75"""))

    @field_validator("players", mode="before")
    @classmethod
    def _split(cls, v: Any) -> Any:
        if isinstance(v, str):  # KOSTI_GAME__PLAYERS=Ann,Boris or a JSON list
            if v.lstrip().startswith("["):
                try:
                    return json.loads(v)
                except ValueError:
                    raise ValueError(f"not a JSON list of names: {v!r}") from None
            return [p for p in (s.strip() for s in v.split(",")) if p]
        return v

    @field_validator("players")
    @classmethod
    def _players_ok(cls, v: list[str]) -> list[str]:
        return check_player_names(v) if v else []  # the one rule; its PlayerNameError is a ValueError

    @model_validator(mode="after")
    def _rules_ok(self) -> GameSettings:
        problem = _rules_problem(self.preset, self.overrides)
        if problem:
            raise ValueError(problem)
        return self


def _rules_problem(preset: str, overrides: Mapping[str, Any]) -> str | None:
    """Ask the rules engine whether ``preset`` + ``overrides`` is a valid rule set; ``None`` if it is.

    Uses :func:`kosti.engine.presets.resolve_rules` (the same check ``kosti replay`` applies), which
    raises ``BadInput`` naming an unknown preset or parameter.
    """
    if not re.fullmatch(r"[a-z0-9_]+", preset):
        return f"game.preset: not a preset name: {preset!r} (see kosti rules)"
    try:
        from kosti.engine.presets import get_preset, resolve_rules
    except ImportError:  # the engine is not installed: only the name's form is checked
        return None
    from kosti.engine.games import GAME_PRESETS, game_preset

    try:
        if preset not in GAME_PRESETS:  # the other dice games of games.md are presets too
            get_preset(preset)
    except Exception as exc:  # noqa: BLE001 - BadInput (exit 2) carries the reason
        if getattr(exc, "exit_code", None) != 2 and not isinstance(exc, ValueError | KeyError):
            raise
        return f"game.preset: {_first_line(exc)}"
    if overrides:
        try:
            if preset in GAME_PRESETS:
                game_preset(preset).params.with_overrides(dict(overrides))
            else:
                resolve_rules({"preset": preset, "overrides": dict(overrides)})
        except Exception as exc:  # noqa: BLE001
            if getattr(exc, "exit_code", None) != 2 and not isinstance(exc, ValueError | KeyError | TypeError):
                raise
            return f"game.overrides: {_first_line(exc)}"
    return None


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


class ServerSettings(_Section):
    """Dashboard HTTP server (``[server]``). The installer writes a fixed random 6-digit PIN."""

    host: str = Field("127.0.0.1", description=_doc("""
        Address to listen on: "127.0.0.1" = this machine only; "0.0.0.0" = the whole network (phones at the table)."""))
    port: Annotated[int, Field(ge=1, le=65535)] = Field(8000, description=_doc("""
        TCP port (1–65535)."""))
    pin: str | None = Field(None, json_schema_extra={"example": "123456"}, description=_doc("""
        PIN (4–6 digits) asked before anyone can change the game when host is not 127.0.0.1.
        Unset: a random PIN is chosen at every start and printed in the log (journalctl -u kosti)."""))
    allowed_hosts: Annotated[list[str], Field(max_length=32)] = Field(default_factory=list, description=_doc("""
        Host names the dashboard answers under, besides IP addresses, localhost and this machine's name
        (NAME and NAME.local), e.g. ["kosti.lan"]: requests naming any other host are refused, reads too."""))
    monitor_from: Annotated[list[str], Field(max_length=32)] = Field(default_factory=list, description=_doc("""
        Networks besides this machine that may read /healthz and /metrics, e.g. ["192.168.1.0/24"] for a
        Prometheus server or a monitor on the local network; empty = this machine only."""))

    @field_validator("monitor_from")
    @classmethod
    def _networks_ok(cls, v: list[str]) -> list[str]:
        for n in v:
            try:
                ipaddress.ip_network(n.strip(), strict=False)
            except ValueError:
                raise ValueError(f"not an IP address or network (e.g. 192.168.1.0/24): {n!r}") from None
        return [n.strip() for n in v]

    @field_validator("allowed_hosts")
    @classmethod
    def _names_ok(cls, v: list[str]) -> list[str]:
        return [cls._host_ok(n) for n in v]

    @field_validator("host")
    @classmethod
    def _host_ok(cls, v: str) -> str:
        v = v.strip()
        try:
            ipaddress.ip_address(v)
            return v
        except ValueError:
            pass
        if not re.fullmatch(r"(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?)+", v):
            raise ValueError(f"not an IP address or host name: {v!r}")
        return v

    @field_validator("pin", mode="before")
    @classmethod
    def _pin_str(cls, v: Any) -> Any:
        if isinstance(v, int) and not isinstance(v, bool):
            return str(v)
        if isinstance(v, str) and not v.strip():
            return None
        return v

    @field_validator("pin")
    @classmethod
    def _pin_ok(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"\d{4,6}", v.strip()):
            raise ValueError("must be 4–6 digits")
        return v.strip() if v else v

    @property
    def is_loopback(self) -> bool:
        """True when only this machine can reach the server (127.0.0.0/8, ::1, ``localhost``)."""
        if self.host.lower() in ("localhost", "localhost."):
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


class StorageSettings(_Section):
    """Where games and frames are kept (``[storage]``)."""

    dir: Path | None = Field(None, json_schema_extra={"example": "/var/lib/kosti"}, description=_doc("""
        Data folder. Default: $XDG_DATA_HOME/kosti (~/.local/share/kosti); the service uses /var/lib/kosti."""))
    db: Path = Field(Path("kosti.db"), description=_doc("""
        SQLite database of games, throws and corrections (relative to dir)."""))
    frames_dir: Path = Field(Path("frames"), description=_doc("""
        Frames of uncertain or corrected throws, kept for retraining (relative to dir)."""))

    @property
    def data_dir(self) -> Path:
        """``dir``, or :func:`kosti.data_dir.default_data_dir` when unset."""
        return (self.dir or default_data_dir()).expanduser()

    @property
    def db_path(self) -> Path:
        """Absolute path of the SQLite database."""
        return self.data_dir / self.db.expanduser()

    @property
    def frames_path(self) -> Path:
        """Absolute path of the frames folder."""
        return self.data_dir / self.frames_dir.expanduser()

    @model_validator(mode="after")
    def _paths_ok(self) -> StorageSettings:
        for d in (self.data_dir, *self.data_dir.parents):  # `kosti run` must be able to create the folders
            if d.exists():
                if not d.is_dir():
                    raise ValueError(f"storage.dir: {str(d)!r} is a file, not a folder")
                break
        if self.db_path.is_dir():
            raise ValueError(f"storage.db: {str(self.db_path)!r} is a folder, not a database file")
        if self.frames_path.exists() and not self.frames_path.is_dir():
            raise ValueError(f"storage.frames_dir: {str(self.frames_path)!r} exists and is not a folder")
        return self

    def ensure_dirs(self) -> None:
        """Create the data folder, the database's folder and the frames folder (mode 0750)."""
        for d in (self.data_dir, self.db_path.parent, self.frames_path):
            d.mkdir(mode=0o750, parents=True, exist_ok=True)


#: One MQTT topic level of kosti's own: a table id, or each level of a prefix (no ``+``, ``#`` or ``/``).
MQTT_TOPIC_LEVEL = re.compile(r"[A-Za-z0-9_-]{1,64}")


def mqtt_address(text: str, tls: bool = False) -> tuple[str, int]:
    """``HOST``, ``HOST:PORT`` or ``[IPv6]:PORT`` → ``(host, port)``; the port defaults to MQTT's 1883 (8883 with
    ``tls``, IANA's ports for MQTT). Raises ``ValueError`` naming what is wrong (an empty host, a port outside
    1–65535, a host that is not an IP address or a DNS name)."""
    s = text.strip()
    port = 8883 if tls else 1883
    m = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\](?::(\d{1,5}))?", s)
    if m:
        host, given = m.group(1), m.group(2)
    elif s.count(":") == 1:
        host, given = s.split(":")
    else:
        host, given = s, None
    if given is not None:
        if not given.isdigit() or not 1 <= int(given) <= 65535:
            raise ValueError(f"{text!r}: the port must be 1–65535")
        port = int(given)
    return ServerSettings._host_ok(host), port


class MqttSettings(_Section):
    """MQTT and Home Assistant (``[mqtt]``, optional: ``pip install 'kosti[mqtt]'``): the dashboard publishes the table
    on a broker (:mod:`kosti.dashboard.mqtt`), and ``kosti club`` reads every table from it. Off while ``broker``
    is unset."""

    broker: str | None = Field(None, json_schema_extra={"example": "mosquitto.local:1883"}, description=_doc("""
        MQTT broker as HOST or HOST:PORT (port 1883, 8883 with tls): the table publishes every throw, turn end,
        bust and game end on <prefix>/<table>/..., its state retained, and Home Assistant finds its sensors.
        Unset: no MQTT. Needs pip install 'kosti[mqtt]' (docs/mqtt.md)."""))
    table: str | None = Field(None, json_schema_extra={"example": "table-1"}, description=_doc("""
        This table's id in the topics: letters, digits, - and _ (at most 64). Unset: this machine's host name."""))
    name: str | None = Field(None, json_schema_extra={"example": "Table by the window"}, description=_doc("""
        The table's name as Home Assistant and the club screen show it (at most 40 characters). Unset: the id."""))
    prefix: str = Field("kosti", description=_doc("""
        First topic level(s) of every kosti topic, e.g. "kosti" or "club/kosti" (kosti club reads the same)."""))
    username: str | None = Field(None, json_schema_extra={"example": "kosti"}, description=_doc("""
        User name on the broker; unset: anonymous."""))
    password: str | None = Field(None, json_schema_extra={"example": "secret"}, description=_doc("""
        Password for username (this file is then readable by root and kosti only: mode 0600)."""))
    tls: bool = Field(False, description=_doc("""
        Connect with TLS, checking the broker's certificate against the system's certificate authorities."""))
    keepalive: Annotated[int, Field(ge=5, le=600)] = Field(30, description=_doc("""
        Seconds between keep-alive pings (5–600): a table whose Pi goes off is marked offline by the broker
        (the last will) about 1.5 times this after its last word."""))
    discovery: bool = Field(True, description=_doc("""
        Announce the sensors to Home Assistant (MQTT discovery): current player, each player's score, turn
        points, last throw, camera state."""))
    discovery_prefix: str = Field("homeassistant", description=_doc("""
        Home Assistant's discovery prefix (its MQTT integration's setting; "homeassistant" unless changed)."""))

    @field_validator("broker")
    @classmethod
    def _broker_ok(cls, v: str | None) -> str | None:
        if v is None or not v.strip():
            return None
        mqtt_address(v)
        return v.strip()

    @field_validator("table")
    @classmethod
    def _table_ok(cls, v: str | None) -> str | None:
        if v is None or not v.strip():
            return None
        if not MQTT_TOPIC_LEVEL.fullmatch(v.strip()):
            raise ValueError(f"{v!r}: use letters, digits, - and _ only (at most 64), e.g. table-1")
        return v.strip()

    @field_validator("name")
    @classmethod
    def _name_ok(cls, v: str | None) -> str | None:
        if v is None or not v.strip():
            return None
        if len(v.strip()) > 40 or any(not c.isprintable() for c in v):
            raise ValueError("at most 40 printable characters")
        return v.strip()

    @field_validator("prefix", "discovery_prefix")
    @classmethod
    def _prefix_ok(cls, v: str) -> str:
        levels = v.strip().split("/")
        if not all(MQTT_TOPIC_LEVEL.fullmatch(level) for level in levels) or len(levels) > 4:
            raise ValueError(f"{v!r}: at most 4 topic levels of letters, digits, - and _, separated by /")
        return v.strip()

    @model_validator(mode="after")
    def _usable(self) -> MqttSettings:
        if self.password is not None and self.username is None:
            raise ValueError("mqtt.password: set username too")
        if self.broker is not None and importlib.util.find_spec("paho") is None:  # kosti config check says it first
            raise ValueError("mqtt.broker: MQTT needs the paho-mqtt package, which is not installed "
                             "(pip install 'kosti[mqtt]'); or leave broker unset")
        return self

    @property
    def enabled(self) -> bool:
        """Whether the table publishes to a broker (``broker`` set)."""
        return self.broker is not None

    def address(self) -> tuple[str, int]:
        """``(host, port)`` of :attr:`broker` (:func:`mqtt_address`; ``ValueError`` when unset)."""
        if self.broker is None:
            raise ValueError("mqtt.broker is not set")
        return mqtt_address(self.broker, self.tls)

    def table_id(self) -> str:
        """:attr:`table`, or this machine's host name made a topic level (other characters become ``-``)."""
        if self.table:
            return self.table
        import socket

        host = socket.gethostname().split(".")[0]
        return re.sub(r"[^A-Za-z0-9_-]", "-", host)[:64] or "kosti"


#: The sections in file order: ``[name]`` → model.
SECTIONS: dict[str, type[_Section]] = {
    "source": SourceSettings, "zones": ZonesSettings, "settle": SettleSettings, "reader": ReaderSettings,
    "game": GameSettings, "server": ServerSettings, "storage": StorageSettings, "mqtt": MqttSettings,
}

#: The same sections as :class:`kosti.config.KostiConfig` in a plain model: validates a file's content
#: alone, without the ``KOSTI_*`` environment (``BaseSettings`` reads it even in ``model_validate``).
FileConfig = create_model(
    "FileConfig", __base__=_Section,
    **{name: (cls, Field(default_factory=cls)) for name, cls in SECTIONS.items()},  # type: ignore[call-overload]
)
