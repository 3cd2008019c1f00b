"""``[reader]``: which models, which runtime, which thresholds; the thresholds are
:class:`kosti.vision.params.ReaderParams`' (declared there once)."""

from __future__ import annotations

import dataclasses
import importlib.util
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from kosti.config.base import Section, doc
from kosti.models import EARLIER_OPERATING_POINTS, EARLIER_ZOOM
from kosti.registry import SHIPPED, Registry, RegistryError
from kosti.vision.params import ReaderParams, config_field, value_problem
from kosti.vision.params import meta as param_meta

#: Reader backend → (the package it imports, how to install it): ``kosti config check`` refuses a backend
#: whose runtime is missing, rather than ``kosti run`` failing later.
_RUNTIME_PACKAGES = {
    "ncnn": ("ncnn", "pip install ncnn (a kosti dependency)"),
    "ultralytics": ("ultralytics", "pip install 'kosti[train]'"),
}


class ReaderSettings(Section):
    """Dice reader (``[reader]``): which models, which runtime, which thresholds; the thresholds are
    :class:`kosti.vision.reader.DiceReader`'s keyword arguments under the same names. Set either ``model``
    or the ``detector``/``classifier`` paths, not both; the paths must exist. The threshold defaults are the
    shipped models' operating point (:data:`kosti.models.DEFAULT_CONF` and its neighbours)."""

    model: str = Field("active", description=doc("""
        Models: "active" (the registry's active version; `kosti models use VERSION` switches it live),
        "shipped" (the weights installed with kosti), or a version listed by `kosti models list`."""))
    detector: Path | None = Field(None, json_schema_extra={"example": "/path/to/dice_det.onnx"}, description=doc("""
        Or explicit model paths instead of `model` (ONNX files; NCNN export folders with backend = "ncnn")."""))
    classifier: Path | None = Field(None, json_schema_extra={"example": "/path/to/dice_cls.onnx"},
                                    description="The face classifier's file or folder, as detector.")
    conf: float = config_field(ReaderParams, "conf")
    iou: float = config_field(ReaderParams, "iou")
    value_conf: float = config_field(ReaderParams, "value_conf")
    tta: bool = config_field(ReaderParams, "tta")
    verify_conf: float = config_field(ReaderParams, "verify_conf")
    verify_prob: float = config_field(ReaderParams, "verify_prob")
    verify_one_conf: float = config_field(ReaderParams, "verify_one_conf")
    not_die_prob: float = config_field(ReaderParams, "not_die_prob")
    dim_gain: float = config_field(ReaderParams, "dim_gain")
    zoom_below: float = config_field(ReaderParams, "zoom_below")
    zoom_imgsz: int = config_field(ReaderParams, "zoom_imgsz")
    zoom_max: int = config_field(ReaderParams, "zoom_max")
    backend: Literal["onnx", "ncnn", "ultralytics"] = Field("onnx", description=doc("""
        Inference runtime: "onnx" (ONNX Runtime), "ncnn" (fastest on a Raspberry Pi) or "ultralytics"
        (.pt files, needs the train extra); the runtime's package must be installed."""))
    threads: int = config_field(ReaderParams, "threads")

    @field_validator("dim_gain")
    @classmethod
    def _dim_gain_off_or_a_gain(cls, v: float) -> float:
        problem = value_problem("dim_gain", v, param_meta(ReaderParams, "dim_gain"))
        if problem:
            raise ValueError(problem.replace("dim_gain must be", "must be"))
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

    def reader_params(self) -> ReaderParams:
        """The thresholds, zoom, runtime and threads as :class:`kosti.vision.params.ReaderParams` (every field of
        this section that is a reader setting, under the same name; the others at their defaults)."""
        given = {f.name: getattr(self, f.name) for f in dataclasses.fields(ReaderParams)
                 if f.name in type(self).model_fields}
        return ReaderParams(**given)

    def reader_kwargs(self, registry: Registry | None = None) -> dict[str, Any]:
        """Keyword arguments for ``kosti.vision.reader.DiceReader(**kwargs)``: ``det_path``, ``cls_path`` (models
        resolved now, :meth:`model_paths`) and ``params`` (:meth:`reader_params`).

        ``backend`` maps 1:1 onto the reader's (``ncnn`` = :mod:`kosti.vision.ncnn_backend`, the ``ncnn``
        package alone, no torch).
        """
        det, cls, _version = self.model_paths(registry)
        return {"det_path": det, "cls_path": cls, "params": self.reader_params()}
