"""``[source]``: the camera or frame source (:func:`kosti.vision.sources.open_source`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from kosti.config.base import Section, doc
from kosti.vision.frame_source import SourceError
from kosti.vision.source_spec import parse_source_spec


class SourceSettings(Section):
    """Camera/frame source (``[source]``); the fields map onto :func:`kosti.vision.sources.open_source`."""

    spec: str = Field("picamera", description=doc("""
        Camera: "picamera" (Raspberry Pi camera), a device index such as "0" (USB webcam /dev/video0),
        an rtsp:// or http:// URL, a video file, a folder of frames (a video saved as images, in name order; fps below),
        or "virtual" (built-in virtual table)."""))
    width: Annotated[int, Field(ge=160, le=4096)] = Field(1280, description=doc("""
        Requested frame width in pixels (160–4096); the camera may round it to a mode it supports."""))
    height: Annotated[int, Field(ge=120, le=3040)] = Field(720, description="Requested frame height in pixels (120–3040).")
    fps: Annotated[float, Field(gt=0.0, le=120.0)] = Field(30.0, description=doc("""
        Requested frame rate (frames per second, > 0 and ≤ 120)."""))
    rotate: Literal[0, 90, 180, 270] = Field(0, description=doc("""
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
