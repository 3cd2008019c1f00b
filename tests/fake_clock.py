"""A fake clock for tests of code that paces itself or measures rates with ``time.monotonic`` / ``time.sleep``.

``FakeClock.install(monkeypatch, module)`` replaces ``module.time`` with this clock: ``monotonic()``, ``time()`` and
``perf_counter()`` read its ``now`` (seconds), ``sleep(s)`` advances it by ``s`` at once. What the code under test
computes from the clock (a pace, a measured frame rate) is then exact and the same on every machine.
"""

from __future__ import annotations

import types

import pytest


class FakeClock:
    """Seconds that pass only when the code sleeps (or the test calls :meth:`advance`)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = float(start)
        self.slept: list[float] = []

    def monotonic(self) -> float:
        """The current fake time in seconds."""
        return self.now

    time = perf_counter = monotonic

    def sleep(self, seconds: float) -> None:
        """Advance the fake time by ``seconds`` (recorded in :attr:`slept`); never blocks."""
        self.slept.append(float(seconds))
        self.now += max(0.0, float(seconds))

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass without a sleep (work that takes time)."""
        self.now += float(seconds)

    def install(self, monkeypatch: pytest.MonkeyPatch, module: types.ModuleType) -> FakeClock:
        """Make ``module``'s ``time.monotonic`` / ``time.time`` / ``time.perf_counter`` / ``time.sleep`` this clock's
        (only inside ``module``: other threads and modules keep the real clock). Returns the clock."""
        fake = types.SimpleNamespace(monotonic=self.monotonic, time=self.time, perf_counter=self.perf_counter,
                                     sleep=self.sleep)
        monkeypatch.setattr(module, "time", fake)
        return self
