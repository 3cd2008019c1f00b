"""The one CI detection of the test suite, and the one way a test treats something it needs that is not there.

* :func:`in_ci` — ``$CI`` set to a true value. CI services spell it differently (GitHub Actions and GitLab
  ``true``, others ``1``, some ``True``); every spelling of yes counts, so ``CI=1`` and ``CI=true`` behave alike.
* :func:`missing` — what is absent is optional here (shared data sets beside the checkout, a train extra on a
  developer's machine): the test is skipped with the reason, except under CI, where ``.ci/run`` / ``scripts/test``
  provide all of it and the absence is a failure.
* :func:`need_module` — :func:`missing` for an importable package (the train extras: ``ultralytics``, ``onnx``,
  ``pnnx``); a base dependency (``ncnn``, ``cv2``, ``onnxruntime``) is imported plainly instead, so a broken
  wheel fails everywhere.
* :func:`shipped` — a file committed with kosti (the models under ``models/``): its absence always fails.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import pytest

#: Values of ``$CI`` that mean "running in CI" (compared lower-case, stripped).
CI_TRUE = frozenset({"1", "true", "yes", "on"})


def in_ci() -> bool:
    """Whether ``$CI`` says this run is CI (:data:`CI_TRUE`, any case): ``CI=1`` and ``CI=true`` alike."""
    return os.environ.get("CI", "").strip().lower() in CI_TRUE


def missing(reason: str) -> NoReturn:
    """Skip the test with ``reason``, or fail it under CI (where every optional input is provided)."""
    if in_ci():
        pytest.fail(f"{reason} (required in CI: CI={os.environ.get('CI')!r})", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def need_module(name: str, why: str) -> ModuleType:
    """Import ``name`` (a package of an optional extra that ``scripts/test`` installs); skip with ``why`` when it
    is not installed, fail under CI. Any other import error (a broken wheel) fails everywhere."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name.split(".")[0]:
            raise  # the package is there but one of its own imports is broken
        missing(f"{name} is not installed: {why}")


def shipped(path: Path, what: str = "shipped file") -> Path:
    """``path`` of a file that ships in the repository (the models); fails the test when it is absent."""
    if not path.is_file():
        pytest.fail(f"{what} missing: {path} (committed with kosti; restore it with git)", pytrace=False)
    return path
