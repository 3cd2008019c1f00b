"""kosti configuration: one TOML file, environment overrides, validated at start.

Where the file is looked for (first hit wins; see :func:`default_config_path`):

1. ``--config PATH`` (the ``path`` argument of :func:`load_config`); it must exist;
   ``$KOSTI_CONFIG`` (a path) stands for ``--config`` when the flag is not given;
2. ``/etc/kosti/kosti.toml`` (the Raspberry Pi service, written by ``deploy/install.sh``);
3. ``$XDG_CONFIG_HOME/kosti/kosti.toml`` (``~/.config/kosti/kosti.toml`` when unset).

No file at all means all defaults. Environment variables override the file: prefix ``KOSTI_``, sections
nested with ``__`` (``KOSTI_SERVER__PORT=8080``, ``KOSTI_SOURCE__SPEC=0``, ``KOSTI_GAME__PLAYERS=Ann,Boris``;
lists and tables as JSON: ``KOSTI_ZONES__ROLL_AREA='[[0,0],[1,0],[1,1],[0,1]]'``). Names are
case-insensitive. Relative paths in the file are resolved against the file's folder; ``storage.db`` and
``storage.frames_dir`` are relative to ``storage.dir``.

Invalid configuration raises :class:`ConfigError` (``exit_code`` 2) whose message names where the bad
value came from, the field and the reason, all on one line, e.g.
``/etc/kosti/kosti.toml: server.port: must be 1–65535, got 70000`` or
``$KOSTI_SERVER__PORT: server.port: must be an integer, got 'http'``. Unknown keys are errors too
(``server.prot: unknown key (did you mean 'port'?)``), so a typo never silently falls back to a default.

The example file ``deploy/kosti.toml`` is :func:`render_config` of the defaults; every key carries a
comment. :func:`write_default_config` writes the same text with chosen values (used by the installer).
"""

from __future__ import annotations

import difflib
import importlib.util
import ipaddress
import json
import math
import os
import re
import tempfile
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from kosti.models import (
    DEFAULT_CONF,
    DEFAULT_IOU,
    DEFAULT_VALUE_CONF,
    DEFAULT_VERIFY_CONF,
    DEFAULT_VERIFY_PROB,
    EARLIER_OPERATING_POINTS,
)
from kosti.data_dir import default_data_dir
from kosti.registry import SHIPPED, Registry, RegistryError
from kosti.vision.settle import MOTION_FRACTION, STILL_FRACTION
from kosti.vision.frame_source import SourceError
from kosti.vision.source_spec import parse_source_spec

ENV_PREFIX = "KOSTI_"
ENV_NESTED = "__"
SYSTEM_CONFIG = Path("/etc/kosti/kosti.toml")
#: Environment variable naming the configuration file when ``--config`` is not given (it must exist); a test
#: run or a second table on the same machine points it at its own file so ``/etc/kosti`` is never read.
CONFIG_ENV = "KOSTI_CONFIG"
_FULL_FRAME: list[tuple[float, float]] = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]


class ConfigError(ValueError):
    """The configuration cannot be used. ``exit_code`` 2 (bad input, ``shared/docs/cli.md``).

    ``str()`` is one line: ``<source>: <field>: <reason>[; <source>: <field>: <reason> ...]``.
    ``errors`` holds the ``(source, field, reason)`` triples (``field`` is dotted, list items as ``[i]``;
    empty for whole-file problems such as a TOML syntax error).
    """

    exit_code = 2

    def __init__(self, message: str, errors: list[tuple[str, str, str]] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or []


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


Point = tuple[Annotated[float, Field(ge=0.0, le=1.0)], Annotated[float, Field(ge=0.0, le=1.0)]]


class SourceSettings(_Section):
    """Camera/frame source (``[source]``); fields map onto :func:`kosti.vision.sources.open_source`.

    ``spec``: ``"picamera"`` (Raspberry Pi camera via Picamera2), a device index such as ``0``
    (``/dev/video0`` through OpenCV) or a ``/dev/video*`` path, an ``rtsp://``/``http(s)://`` URL, a
    video file, a folder of photos, or ``"virtual"`` / ``"virtual:N"`` (built-in virtual table, N dice).
    ``width``×``height`` in pixels and ``fps`` are what the camera is asked for (a camera may round).
    """

    spec: str = "picamera"
    width: Annotated[int, Field(ge=160, le=4096)] = 1280
    height: Annotated[int, Field(ge=120, le=3040)] = 720
    fps: Annotated[float, Field(gt=0.0, le=120.0)] = 30.0

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
        their own size and rate, so they get none.
        """
        if self.kind == "picamera":
            return {"size": (self.width, self.height), "fps": self.fps}
        if self.kind in ("device", "url"):
            return {"width": self.width, "height": self.height, "fps": self.fps}
        return {}


def _polygon_problem(points: list[tuple[float, float]]) -> str | None:
    """Why ``points`` is not a usable zone polygon, or ``None``: the one rule, :func:`kosti.vision.zones.polygon_problem`."""
    from kosti.vision.zones import polygon_problem

    return polygon_problem(points)


def polygon_overlap(a: list[tuple[float, float]], b: list[tuple[float, float]], grid: int = 200) -> float:
    """Fraction of the smaller polygon's area covered by the other (0–1), sampled on a ``grid``² lattice.

    Even-odd point-in-polygon test on cell centres of the unit square; error about 1/``grid``.
    """
    import numpy as np

    c = (np.arange(grid) + 0.5) / grid
    xs, ys = np.meshgrid(c, c)

    def inside(poly: list[tuple[float, float]]) -> np.ndarray:
        m = np.zeros_like(xs, dtype=bool)
        n = len(poly)
        for i in range(n):
            (x0, y0), (x1, y1) = poly[i], poly[(i + 1) % n]
            if y0 == y1:
                continue
            cond = (ys >= min(y0, y1)) & (ys < max(y0, y1))
            xcross = x0 + (ys - y0) * (x1 - x0) / (y1 - y0)
            m ^= cond & (xs < xcross)
        return m

    ma, mb = inside(a), inside(b)
    smaller = min(int(ma.sum()), int(mb.sum()))
    return float((ma & mb).sum()) / smaller if smaller else 0.0


class ZonesSettings(_Section):
    """Table zones (``[zones]``) as polygons of ``[x, y]`` points normalised to the frame (0–1, origin top-left).

    ``roll_area``: where thrown dice are read (default: the whole frame). ``set_aside``: where kept dice
    are put aside between throws (dice there are not part of the throw); empty = no set-aside zone.
    The two may touch but not overlap by more than 2 % of the smaller one. Draw them on the dashboard's
    calibration page rather than by hand (docs/setup.md).
    """

    roll_area: list[Point] = Field(default_factory=lambda: list(_FULL_FRAME))
    set_aside: list[Point] = Field(default_factory=list)

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

    @model_validator(mode="after")
    def _no_overlap(self) -> ZonesSettings:
        if self.set_aside:
            ov = polygon_overlap(self.roll_area, self.set_aside)
            if ov > 0.02:
                raise ValueError(
                    f"zones.set_aside: overlaps zones.roll_area ({ov:.0%} of the smaller zone); "
                    "dice there would count both as thrown and as set aside")
        return self


class SettleSettings(_Section):
    """When the dice count as settled (``[settle]``), for :class:`kosti.vision.settle.SettleDetector`.

    ``still_time_s``: seconds without motion before a throw is read (default 0.4 s: a die on felt stops
    within a few tenths of a second). ``motion_threshold``: fraction (0–1) of the downscaled frame's pixels
    that must change between two frames for the table to count as moving (``motion_fraction``, default
    0.004). ``still_threshold``: fraction below which a frame counts as still (``still_fraction``, default
    0.0015; must not exceed ``motion_threshold`` — the gap is the hysteresis).
    """

    still_time_s: Annotated[float, Field(gt=0.0, le=10.0)] = 0.4
    motion_threshold: Annotated[float, Field(gt=0.0, le=1.0)] = MOTION_FRACTION
    still_threshold: Annotated[float, Field(gt=0.0, le=1.0)] = STILL_FRACTION

    @model_validator(mode="after")
    def _hysteresis(self) -> SettleSettings:
        if self.still_threshold > self.motion_threshold:
            raise ValueError(
                f"settle.still_threshold: {self.still_threshold} must not exceed "
                f"settle.motion_threshold = {self.motion_threshold} (the gap is the hysteresis)")
        return self

    def detector_kwargs(self) -> dict[str, float]:
        """Keyword arguments for ``kosti.vision.settle.SettleDetector(**kwargs)``."""
        return {"still_s": self.still_time_s, "motion_fraction": self.motion_threshold,
                "still_fraction": self.still_threshold}


#: Reader backend → (the package it imports, how to install it): ``kosti config check`` refuses a backend
#: whose runtime is missing, rather than ``kosti run`` failing later.
_RUNTIME_PACKAGES = {
    "ncnn": ("ncnn", "pip install 'kosti[pi]'"),
    "ultralytics": ("ultralytics", "pip install 'kosti[train]'"),
}


class ReaderSettings(_Section):
    """Dice reader (``[reader]``): which models, which runtime, which thresholds.

    ``model``: ``"active"`` (follow the model registry's active version; ``kosti models use`` switches a
    running dashboard), ``"shipped"``, or a registered version name (``kosti models list``).
    ``detector`` / ``classifier``: explicit model paths instead (ONNX files for ``onnx``/``ultralytics``,
    NCNN export folders for ``ncnn``); they must exist. Set either ``model`` or the paths, not both.
    ``conf``: detector confidence threshold (0–1). ``iou``: NMS IoU threshold (0–1).
    ``value_conf``: minimum face probability (0–1); below it the die is reported uncertain. Defaults: the
    shipped models' operating point (:data:`kosti.models.DEFAULT_CONF` and its neighbours).
    ``tta``: read each die's crop in its four 90° rotations and average (more accurate, 4× classifier
    time; default on).
    ``verify_conf`` / ``verify_prob``: the classifier's second look — a box scoring above ``verify_conf``
    but not above ``conf`` is a die only if the classifier reads a face with probability ``≥
    verify_prob`` (``verify_conf ≥ conf`` turns it off).
    ``backend``: ``onnx`` (ONNX Runtime, default), ``ncnn`` (the ``ncnn`` package alone, no torch; fastest
    on the Pi's ARM cores) or ``ultralytics`` (``.pt``, needs the ``train`` extra); the backend's package must
    be installed. ``threads``: CPU threads per model (1–16; the Pi 4/5 has 4 cores shared by two models
    and the camera).
    """

    model: str = "active"
    detector: Path | None = None
    classifier: Path | None = None
    conf: Annotated[float, Field(gt=0.0, lt=1.0)] = DEFAULT_CONF
    iou: Annotated[float, Field(gt=0.0, le=1.0)] = DEFAULT_IOU
    value_conf: Annotated[float, Field(ge=0.0, le=1.0)] = DEFAULT_VALUE_CONF
    tta: bool = True
    verify_conf: Annotated[float, Field(ge=0.0, le=1.0)] = DEFAULT_VERIFY_CONF
    verify_prob: Annotated[float, Field(ge=0.0, le=1.0)] = DEFAULT_VERIFY_PROB
    backend: Literal["onnx", "ncnn", "ultralytics"] = "onnx"
    threads: Annotated[int, Field(ge=1, le=16)] = 1

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
        value_conf 0.4, verify_prob 0.98, :data:`kosti.models.EARLIER_OPERATING_POINTS`), with the shipped
        models: an old default, not a choice — those keys take today's defaults and count as unset (a
        table installed before v1.0 then reads at v1.0's own operating point)."""
        if self.detector or self.classifier:
            return self  # own model files: their thresholds are the user's
        for old in EARLIER_OPERATING_POINTS:
            if all(getattr(self, k) == v for k, v in old.items()) and (
                    self.conf, self.value_conf, self.verify_prob) != (DEFAULT_CONF, DEFAULT_VALUE_CONF, DEFAULT_VERIFY_PROB):
                for k in old:
                    object.__setattr__(self, k, type(self).model_fields[k].default)
                    self.__pydantic_fields_set__.discard(k)
                break
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
                "backend": self.backend,
                "threads": self.threads}


class GameSettings(_Section):
    """Game (``[game]``): rule preset (``kosti rules``), parameter overrides and players.

    ``preset``: a preset name of rules.md §4 (``classic``, ``farkle``, ``ten_thousand``, …).
    ``overrides``: rule parameters as in rules.md §3–4, as TOML tables
    (``[game.overrides.opening]`` / ``threshold = 75``). ``players``: seat order; empty = enter on the
    dashboard. Names must be unique and non-blank, at most 8 players and 24 characters each.
    """

    preset: str = "classic"
    overrides: dict[str, Any] = Field(default_factory=dict)
    players: Annotated[list[str], NoDecode] = Field(default_factory=list)

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
        names = [p.strip() for p in v]
        if any(not n for n in names):
            raise ValueError("player names must not be blank")
        if len(names) > 8:
            raise ValueError(f"at most 8 players, got {len(names)}")
        long = [n for n in names if len(n) > 24]
        if long:
            raise ValueError(f"player name longer than 24 characters: {long[0]!r}")
        seen: set[str] = set()
        for n in names:
            if n.casefold() in seen:
                raise ValueError(f"duplicate player name {n!r}")
            seen.add(n.casefold())
        return names

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
    """Dashboard HTTP server (``[server]``).

    ``host``: address to bind (default ``127.0.0.1``, this machine only; ``0.0.0.0`` = every network
    interface, e.g. to use phones at the table). ``port``: TCP port 1–65535 (default 8000; below 1024
    needs root or CAP_NET_BIND_SERVICE). ``pin``: 4–6 digits asked before anyone can change the game
    when ``host`` is not a loopback address; unset = the dashboard picks a random PIN at every start and
    prints it (``journalctl -u kosti``). The installer writes a fixed random 6-digit PIN.
    ``allowed_hosts``: host names (besides IP addresses, ``localhost`` and this machine's own name and
    ``NAME.local``) under which the dashboard may be changed, e.g. ``["kosti.lan"]``; a state-changing request
    naming any other host is refused (a foreign web page re-pointing its name at the table: DNS rebinding).
    """

    host: str = "127.0.0.1"
    port: Annotated[int, Field(ge=1, le=65535)] = 8000
    pin: str | None = None
    allowed_hosts: Annotated[list[str], Field(max_length=32)] = Field(default_factory=list)

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
    """Where games and frames are kept (``[storage]``).

    ``dir``: data folder (default ``$XDG_DATA_HOME/kosti``; the service uses ``/var/lib/kosti``).
    ``db``: SQLite database of games, throws and corrections (relative to ``dir``; default ``kosti.db``).
    ``frames_dir``: saved frames of uncertain or corrected throws, for retraining (relative to ``dir``).
    """

    dir: Path | None = None
    db: Path = Path("kosti.db")
    frames_dir: Path = Path("frames")

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


class KostiConfig(BaseSettings):
    """The whole configuration. ``KostiConfig()`` = defaults + ``KOSTI_*`` environment variables;
    :func:`load_config` adds the TOML file underneath the environment.

    Sections: ``source``, ``zones``, ``settle``, ``reader``, ``game``, ``server``, ``storage`` (see each
    class). Unknown keys are rejected.
    """

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter=ENV_NESTED, case_sensitive=False, extra="forbid",
        validate_default=True,
    )

    source: SourceSettings = Field(default_factory=SourceSettings)
    zones: ZonesSettings = Field(default_factory=ZonesSettings)
    settle: SettleSettings = Field(default_factory=SettleSettings)
    reader: ReaderSettings = Field(default_factory=ReaderSettings)
    game: GameSettings = Field(default_factory=GameSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)

    @classmethod
    def settings_customise_sources(
        cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Environment first (highest priority), then the init values (the TOML file); no .env files."""
        return env_settings, init_settings


# ------------------------------------------------------------------------------------------ loading
def default_config_path() -> Path:
    """``$KOSTI_CONFIG`` when set; else ``/etc/kosti/kosti.toml`` if it exists, else
    ``$XDG_CONFIG_HOME/kosti/kosti.toml``."""
    if os.environ.get(CONFIG_ENV):
        return Path(os.environ[CONFIG_ENV]).expanduser()
    if SYSTEM_CONFIG.is_file():
        return SYSTEM_CONFIG
    base = os.environ.get("XDG_CONFIG_HOME") or ""
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".config"
    return root / "kosti" / "kosti.toml"


#: Keys (dotted) holding paths that are resolved against the config file's folder.
_FILE_RELATIVE = (("reader", "detector"), ("reader", "classifier"), ("storage", "dir"))


#: Largest configuration file read (bytes); the commented template is ~6 KiB.
MAX_CONFIG_BYTES = 1024 * 1024


def load_config(path: str | os.PathLike[str] | None = None) -> KostiConfig:
    """Read, merge and validate the configuration.

    ``path``: the TOML file (``--config``); it must exist. ``None``: ``$KOSTI_CONFIG`` when set (it must
    exist), else :func:`default_config_path`, and defaults when that file does not exist. ``KOSTI_*`` environment variables override the file.
    Returns the validated :class:`KostiConfig`. Raises :class:`ConfigError` (exit code 2) naming the
    source, field and reason of every problem (unreadable file, TOML syntax, unknown key, bad value).
    """
    if path is None and os.environ.get(CONFIG_ENV):
        path = os.environ[CONFIG_ENV]  # as --config: it must exist
    explicit = path is not None
    p = Path(path).expanduser() if explicit else default_config_path()
    data: dict[str, Any] = {}
    label = str(p)
    if p.is_file():
        try:
            if p.stat().st_size > MAX_CONFIG_BYTES:
                raise ConfigError(f"{label}: larger than {MAX_CONFIG_BYTES // 1024} KiB; not a kosti configuration")
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{label}: invalid TOML: {exc}") from exc
        except RecursionError:
            raise ConfigError(f"{label}: invalid TOML: nested too deeply") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{label}: cannot read: {getattr(exc, 'strerror', None) or exc}") from exc
        for section, key in _FILE_RELATIVE:
            sec = data.get(section)
            if isinstance(sec, dict) and isinstance(sec.get(key), str):
                q = Path(sec[key]).expanduser()
                sec[key] = str(q if q.is_absolute() else (p.parent / q).resolve())
    elif explicit:
        what = "is a folder, not a file" if p.is_dir() else (
            "not a regular file (a pipe or a device)" if p.exists() else "no such file")
        raise ConfigError(f"{label}: {what}")
    else:
        label = "defaults"
    try:
        return KostiConfig(**data)
    except ValidationError as exc:
        raise _config_error(exc, label) from None
    except SettingsError as exc:  # an environment value that is not valid JSON for a list/table
        m = re.search(r'field "(\w+)"', str(exc))
        section = (m.group(1) if m else "").upper()
        names = sorted(k for k in os.environ if section and k.upper().startswith(ENV_PREFIX + section))
        where = ", ".join("$" + n for n in names) or "environment"
        raise ConfigError(
            f"{where}: {section.lower() or 'value'}: not valid JSON (lists and tables in KOSTI_* variables "
            "are written as JSON, e.g. [[0,0],[1,0],[1,1],[0,1]])") from None


def _config_error(exc: ValidationError, file_label: str) -> ConfigError:
    errors: list[tuple[str, str, str]] = []
    for err in exc.errors(include_url=False):
        loc = tuple(err.get("loc", ()))
        field, reason = _describe(err, loc)
        errors.append((_origin(tuple(re.sub(r"\[\d+\]", "", field).split(".")), file_label), field, reason))
    msg = "; ".join(f"{src}: {field}: {reason}" if field else f"{src}: {reason}"
                    for src, field, reason in errors)
    return ConfigError(msg, errors)


def _dotted(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _origin(loc: tuple[Any, ...], file_label: str) -> str:
    """``$KOSTI_SECTION__KEY`` when the environment supplied the value at ``loc``, else the file."""
    env = {k.upper(): k for k in os.environ}
    names = [str(p) for p in loc if not isinstance(p, int)]
    for depth in range(len(names), 0, -1):
        name = ENV_PREFIX + ENV_NESTED.join(names[:depth]).upper()
        if name in env:
            return "$" + env[name]
    return file_label


def _field_bounds(loc: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """The (ge, gt, le, lt) bounds declared on the field at ``loc`` (or its list item type)."""
    import annotated_types as at

    model: Any = KostiConfig
    info = None
    for part in loc:
        if isinstance(part, int):
            continue
        fields = getattr(model, "model_fields", None)
        if not fields or part not in fields:
            return None
        info = fields[part]
        model = info.annotation
    if info is None:
        return None
    ge = gt = le = lt = None
    for m in info.metadata:
        if isinstance(m, at.Ge):
            ge = m.ge
        elif isinstance(m, at.Gt):
            gt = m.gt
        elif isinstance(m, at.Le):
            le = m.le
        elif isinstance(m, at.Lt):
            lt = m.lt
    return ge, gt, le, lt


def _describe(err: Mapping[str, Any], loc: tuple[Any, ...]) -> tuple[str, str]:
    """Turn one pydantic error into ``(dotted field, reason)`` in plain words."""
    typ, ctx, value = err.get("type", ""), err.get("ctx") or {}, err.get("input")
    field = _dotted(loc)
    got = f", got {_show(value)}"
    if typ in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        b = _field_bounds(loc)
        if b is None or all(x is None for x in b):  # e.g. a polygon coordinate
            b = (ctx.get("ge"), ctx.get("gt"), ctx.get("le"), ctx.get("lt"))
            if loc and isinstance(loc[-1], int) and len(loc) >= 2 and isinstance(loc[-2], int):
                b = (0, None, 1, None)  # normalised coordinates
        ge, gt, le, lt = (_num(x) for x in b)
        if isinstance(value, str):  # an environment value: show it as typed
            got = f", got {value}"
        if ge is not None and le is not None:
            return field, f"must be {ge}–{le}{got}"
        lo = f"≥ {ge}" if ge is not None else (f"> {gt}" if gt is not None else None)
        hi = f"≤ {le}" if le is not None else (f"< {lt}" if lt is not None else None)
        return field, f"must be {' and '.join(x for x in (lo, hi) if x)}{got}"
    if typ == "extra_forbidden":
        parent, key = loc[:-1], str(loc[-1]) if loc else ""
        siblings = _field_names(parent)
        hint = difflib.get_close_matches(key, siblings, n=1)
        tail = f" (did you mean {hint[0]!r}?)" if hint else (
            f" (known: {', '.join(siblings)})" if siblings else "")
        return field, f"unknown key{tail}"
    if typ == "missing":
        return field, "required"
    if typ in ("int_parsing", "int_type", "int_from_float"):
        return field, f"must be an integer{got}"
    if typ in ("float_parsing", "float_type"):
        return field, f"must be a number{got}"
    if typ in ("bool_parsing", "bool_type"):
        return field, f"must be true or false{got}"
    if typ in ("string_type",):
        return field, f"must be a string{got}"
    if typ in ("list_type", "tuple_type"):
        return field, f"must be a list{got}"
    if typ in ("too_short", "too_long") and loc and isinstance(loc[-1], int):
        return field, f"must be an [x, y] pair{got}"
    if typ in ("model_type", "dict_type", "model_attributes_type"):
        return field, f"must be a table (a [{field}] section){got}"
    if typ == "literal_error":
        return field, f"must be one of {ctx.get('expected', '?')}{got}"
    if typ == "value_error":
        msg = str(ctx.get("error", err.get("msg", "")))
        msg = msg.removeprefix("Value error, ")
        m = re.match(r"^([a-z_]+(?:\.[a-z_]+)+): (.*)$", msg, re.S)
        if m:  # a cross-field check names its own field
            return m.group(1), m.group(2)
        return field, msg
    return field, f"{err.get('msg', 'invalid')}{got}"


def _num(x: Any) -> Any:
    """Bounds as written by people: 0.0 → 0, 120.0 → 120, 0.25 → 0.25."""
    return int(x) if isinstance(x, float) and x.is_integer() else x


def _field_names(loc: tuple[Any, ...]) -> list[str]:
    model: Any = KostiConfig
    for part in loc:
        if isinstance(part, int):
            continue
        fields = getattr(model, "model_fields", None)
        if not fields or part not in fields:
            return []
        model = fields[part].annotation
    fields = getattr(model, "model_fields", None)
    return list(fields) if fields else []


def _show(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, dict):
        return "a table"
    return json.dumps(value, ensure_ascii=False, default=str) if not isinstance(value, float) else f"{value:g}"


# ------------------------------------------------------------------------------------------ writing
#: The commented file. ``@dotted@`` is replaced by the TOML value; ``@dotted|EXAMPLE@`` on a key whose
#: value is unset (None) turns the line into a commented-out example.
TEMPLATE = """\
# kosti configuration — camera scorekeeper for the dice game 1000 (Тысяча), Farkle and 10000.
# Environment variables override this file: KOSTI_<SECTION>__<KEY>, e.g. KOSTI_SERVER__PORT=8080.
# Check it with `kosti config check`; relative paths are relative to this file's folder.
# After editing: sudo systemctl restart kosti   (docs/setup.md)

[source]
# Camera: "picamera" (Raspberry Pi camera), a device index such as "0" (USB webcam /dev/video0),
# an rtsp:// or http:// URL, a video file, a folder of photos, or "virtual" (built-in virtual table).
spec = @source.spec@
# Requested frame width in pixels (160–4096); the camera may round it to a mode it supports.
width = @source.width@
# Requested frame height in pixels (120–3040).
height = @source.height@
# Requested frame rate (frames per second, > 0 and ≤ 120).
fps = @source.fps@

[zones]
# Polygons of [x, y] points normalised to the frame (0–1, origin top-left). Draw them on the dashboard
# (Calibrate) instead of by hand. roll_area: where thrown dice are read (default: the whole frame).
roll_area = @zones.roll_area@
# set_aside: where kept dice are put aside between throws (отложенные кости); [] = no such zone.
set_aside = @zones.set_aside@

[settle]
# A throw is read once the table has been still this long (seconds, > 0, ≤ 10).
still_time_s = @settle.still_time_s@
# Fraction (0–1) of the (downscaled) frame's pixels that must change between frames to count as motion.
motion_threshold = @settle.motion_threshold@
# Fraction below which a frame counts as still; must not exceed motion_threshold (hysteresis).
still_threshold = @settle.still_threshold@

[reader]
# Models: "active" (the registry's active version; `kosti models use VERSION` switches it live),
# "shipped" (the weights installed with kosti), or a version listed by `kosti models list`.
model = @reader.model@
# Or explicit model paths instead of `model` (ONNX files; NCNN export folders with backend = "ncnn").
detector = @reader.detector|"/path/to/dice_det.onnx"@
classifier = @reader.classifier|"/path/to/dice_cls.onnx"@
# Detector confidence threshold (0–1): boxes scoring above it are dice.
conf = @reader.conf@
# Overlap (IoU, 0–1) above which two boxes are taken as the same die and the weaker one is dropped.
iou = @reader.iou@
# Minimum face probability (0–1); below it a die is shown as uncertain and the throw asks for a check.
value_conf = @reader.value_conf@
# Read each die in four 90° rotations and average (more accurate; 4x the face-classifier time).
tta = @reader.tta@
# Second look: a box scoring above verify_conf (but not above conf) is a die only if the face
# classifier confirms it (see verify_prob). verify_conf = conf turns the second look off.
verify_conf = @reader.verify_conf@
# Face probability (0–1) with which the classifier confirms such a weak box.
verify_prob = @reader.verify_prob@
# Inference runtime: "onnx" (ONNX Runtime), "ncnn" (fastest on a Raspberry Pi) or "ultralytics".
backend = @reader.backend@
# CPU threads per model (1–16).
threads = @reader.threads@

[game]
# Rule preset (`kosti rules` lists them): classic, farkle, ten_thousand, ...
preset = @game.preset@
# Players in seat order; [] = enter them on the dashboard.
players = @game.players@
# Rule parameter overrides (names as in `kosti rules --json`), as tables, for example:
#   [game.overrides.opening]
#   threshold = 75
@game.overrides@
[server]
# Address to listen on: "127.0.0.1" = this machine only; "0.0.0.0" = the whole network (phones at the table).
host = @server.host@
# TCP port (1–65535).
port = @server.port@
# PIN (4–6 digits) asked before anyone can change the game when host is not 127.0.0.1.
# Unset: a random PIN is chosen at every start and printed in the log (journalctl -u kosti).
pin = @server.pin|"123456"@
# Host names the dashboard may be changed under, besides IP addresses, localhost and this machine's name
# (NAME and NAME.local), e.g. ["kosti.lan"]: requests naming any other host cannot change the game.
allowed_hosts = @server.allowed_hosts@

[storage]
# Data folder. Default: $XDG_DATA_HOME/kosti (~/.local/share/kosti); the service uses /var/lib/kosti.
dir = @storage.dir|"/var/lib/kosti"@
# SQLite database of games, throws and corrections (relative to dir).
db = @storage.db@
# Frames of uncertain or corrected throws, kept for retraining (relative to dir).
frames_dir = @storage.frames_dir@
"""

_PLACEHOLDER = re.compile(r"@([a-z_]+\.[a-z_]+)(?:\|([^@]*))?@")


def _toml_value(v: Any) -> str:
    """Format a scalar or (nested) list as a TOML value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"cannot write {v} to TOML")
        return repr(v)
    if isinstance(v, Path):
        v = str(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a JSON string is a valid TOML basic string
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def _toml_tables(prefix: str, table: Mapping[str, Any]) -> str:
    """Render ``table`` as ``[prefix]`` with sub-tables as ``[prefix.key]``."""
    scalars = {k: v for k, v in table.items() if not isinstance(v, Mapping)}
    subs = {k: v for k, v in table.items() if isinstance(v, Mapping)}
    out = f"[{prefix}]\n" + "".join(f"{_toml_key(k)} = {_toml_value(v)}\n" for k, v in scalars.items())
    for k, v in subs.items():
        out += _toml_tables(f"{prefix}.{_toml_key(k)}", v)
    return out


def _toml_key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k, ensure_ascii=False)


def render_config(values: Mapping[str, Any] | None = None) -> str:
    """The commented TOML text of a configuration.

    ``values``: nested dict of section → key → value (as in the file); missing keys take the defaults.
    Values are validated first (:class:`ConfigError` on a bad one). The result parses back to the same
    configuration (:func:`load_config`).
    """
    data = _plain_defaults()
    for section, keys in (values or {}).items():
        if section not in data or not isinstance(keys, Mapping):
            raise ConfigError(f"{section}: unknown section (known: {', '.join(data)})")
        data[section].update(keys)
    _validate_plain(data)

    def sub(m: re.Match[str]) -> str:
        section, key = m.group(1).split(".")
        if section == "game" and key == "overrides":
            ov = data["game"].get("overrides") or {}
            return _toml_tables("game.overrides", ov) if ov else ""
        v = data[section].get(key)
        if v is None:
            return "\0" + (m.group(2) or '""')  # commented-out example, fixed up below
        return _toml_value(v)

    lines = []
    for line in _PLACEHOLDER.sub(sub, TEMPLATE).splitlines(keepends=True):
        if "\0" in line:
            line = "# " + line.replace("\0", "")
        lines.append(line)
    return "".join(lines)


def _plain_defaults() -> dict[str, dict[str, Any]]:
    """Default values per section as plain Python (tuples → lists, Paths → str), without the environment."""
    out: dict[str, dict[str, Any]] = {}
    for name, info in KostiConfig.model_fields.items():
        section_cls = info.annotation
        sec = section_cls()  # type: ignore[misc,operator]
        out[name] = json.loads(sec.model_dump_json(exclude_none=False))
    return out


#: The same sections as :class:`KostiConfig` in a plain model: validates a file's content alone, without
#: the ``KOSTI_*`` environment (``BaseSettings`` reads it even in ``model_validate``).
_FileConfig = create_model(
    "_FileConfig", __base__=_Section,
    **{name: (info.annotation, info) for name, info in KostiConfig.model_fields.items()},  # type: ignore[call-overload]
)


def _validate_plain(data: Mapping[str, Any]) -> None:
    """Validate ``data`` without environment overrides (what the file alone would give)."""
    try:
        _FileConfig.model_validate(data)
    except ValidationError as exc:
        raise _config_error(exc, "values") from None


def write_default_config(path: str | os.PathLike[str], values: Mapping[str, Any] | None = None, *,
                         overwrite: bool = False, mode: int = 0o600) -> Path:
    """Write the commented config file (defaults, or ``values`` as in :func:`render_config`) to ``path``.

    Never replaces an existing file unless ``overwrite`` (it holds the PIN and calibrated zones):
    raises :class:`ConfigError` instead. Writes a temporary file and renames it into place, with
    ``mode`` (default 0600: the file may hold the PIN). Creates missing parent folders. Returns the path.
    """
    p = Path(path).expanduser()
    if p.exists() and not overwrite:
        raise ConfigError(f"{p}: already exists; not overwriting it (it may hold your PIN and zones)")
    text = render_config(values)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".kosti-", suffix=".toml.tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        if overwrite:
            os.replace(tmp, p)
        else:
            os.link(tmp, p)  # fails if the file appeared meanwhile: never clobber
            os.unlink(tmp)
    except FileExistsError:
        os.unlink(tmp)
        raise ConfigError(f"{p}: already exists; not overwriting it") from None
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return p


def parse_assignment(text: str) -> tuple[str, str, Any]:
    """Parse ``section.key=value`` (as given to ``kosti config init --set``) into ``(section, key, value)``.

    The value is read as a TOML value when it is one (``8080``, ``true``, ``[[0,0],[1,0],[1,1]]``,
    ``"x"``), else taken as a plain string (``0.0.0.0``, ``/var/lib/kosti``, ``012345``).
    Raises :class:`ConfigError` when the left side is not ``section.key``.
    """
    left, sep, right = text.partition("=")
    m = re.fullmatch(r"\s*([a-z_]+)\.([a-z_]+)\s*", left)
    if not sep or not m:
        raise ConfigError(f"--set {text!r}: expected section.key=value, e.g. server.port=8080")
    raw = right.strip()
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return m.group(1), m.group(2), value
