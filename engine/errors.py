"""Errors raised by the rules engine.

Every error carries an integer ``exit_code`` so that the ``kosti`` command line (``kosti/cli.py``)
turns it into one stderr line and that exit code (``../shared/docs/cli.md``):

* :class:`BadInput` — exit 2: malformed input (a face outside 1–6, the wrong number of dice for the
  state, an unknown preset or rule parameter, unreadable JSON).
* :class:`RuleViolation` — exit 3: a well-formed action that the rules forbid now (banking below the
  opening threshold, in a pit, on the barrel, with hot dice pending; keeping a non-scoring die).
"""

from __future__ import annotations


class KostiEngineError(Exception):
    """Base class of every error the engine raises on purpose (exit code 1 if not more specific)."""

    exit_code: int = 1


class BadInput(KostiEngineError, ValueError):
    """Malformed input that no rule could accept (exit code 2). ``str()`` is the English reason;
    ``reason_ru`` the Russian one where the raiser gives it (``kosti play --lang ru``), else the English."""

    exit_code = 2

    def __init__(self, message: str = "", reason_ru: str | None = None) -> None:
        super().__init__(message)
        self.reason_ru = reason_ru if reason_ru is not None else message


class RuleViolation(KostiEngineError):
    """A well-formed action the rules forbid in the current state (exit code 3).

    ``reason_en`` / ``reason_ru`` give the reason in the players' words (English / Russian); ``str()``
    is the English reason.
    """

    exit_code = 3

    def __init__(self, reason_en: str, reason_ru: str | None = None) -> None:
        super().__init__(reason_en)
        self.reason_en = reason_en
        self.reason_ru = reason_ru if reason_ru is not None else reason_en
