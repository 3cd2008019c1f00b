"""What every section of the configuration shares: the base model (unknown keys refused, defaults validated), a
field description written as indented source lines, a normalised frame point."""

from __future__ import annotations

import textwrap
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

#: The whole frame as a polygon of normalised points (the default roll area).
_FULL_FRAME: list[tuple[float, float]] = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]


class Section(BaseModel):
    """A ``[section]`` of ``kosti.toml``: unknown keys are refused, defaults validated like any value."""

    model_config = ConfigDict(extra="forbid", validate_default=True)


#: A point ``(x, y)`` normalised to the frame (0–1, origin top-left).
Point = tuple[Annotated[float, Field(ge=0.0, le=1.0)], Annotated[float, Field(ge=0.0, le=1.0)]]


def doc(text: str) -> str:
    """A field description written as indented source lines → the text (line breaks and the indentation
    beyond the common one kept)."""
    return textwrap.dedent(text).strip("\n").rstrip()
