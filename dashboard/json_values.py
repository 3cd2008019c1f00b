"""JSON values as the dashboard stores and sends them: the :data:`JsonObject` type and the narrowing of a stored
value (a payload's faces, a row's number) back to the Python type the code needs."""

from __future__ import annotations

from pydantic import JsonValue

#: A JSON object: a view, an event, a payload.
JsonObject = dict[str, JsonValue]


def json_int(v: JsonValue) -> int:
    """A JSON number (or numeric text) as ``int``; ``None``/``0``/empty → 0 (as ``int(v or 0)``)."""
    if not v:
        return 0
    if isinstance(v, (int, float, str)):
        return int(v)
    raise TypeError(f"expected a number, got {v!r}")


def json_names(v: JsonValue) -> list[str]:
    """A JSON list of player names as ``list[str]``; anything but a list → ``[]``."""
    return [str(n) for n in v] if isinstance(v, list) else []


def json_faces(v: JsonValue) -> list[int]:
    """A stored payload's ``faces`` (a JSON list of numbers) as ints; anything but a list → ``[]``."""
    return [json_int(f) for f in v] if isinstance(v, list) else []
