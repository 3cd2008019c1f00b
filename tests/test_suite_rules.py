"""Rules the test suite keeps about itself (issue 45), checked by reading its source.

* No wall-clock assertion: a unit test does not assert how fast something ran (elapsed seconds, a measured frame
  rate) — the same code passes on a laptop and fails on a loaded CI machine. Speed belongs in ``benchmarks/``;
  tests use a fake clock (``tests/fake_clock.py``), count frames or reads, or wait for an event with a timeout far
  above what any machine needs (a wait that ends early is not an assertion about speed).
* One CI detection: only ``tests/ci_guard.py`` reads ``$CI``, so ``CI=1`` and ``CI=true`` mean the same everywhere.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
#: Functions that read a wall clock (``time.monotonic()``, ``perf_counter()``, ``datetime.now()`` ...).
CLOCKS = frozenset({"monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns", "time", "time_ns", "now",
                    "utcnow"})
#: A measured rate: an attribute or key named like these (``src.fps``, ``info["delivered_fps"]``).
RATE = re.compile(r"(^|_)fps$|per_s(ec)?$|_rate$")
ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _is_clock_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    if isinstance(f, ast.Attribute) and f.attr in CLOCKS:
        # time.monotonic(), _t.monotonic(), datetime.now(); not obj.time_s or a method of the code under test
        return isinstance(f.value, ast.Name) and f.value.id in {"time", "_t", "datetime", "dt", "_time"}
    return isinstance(f, ast.Name) and f.id in {"monotonic", "perf_counter", "monotonic_ns", "perf_counter_ns"}


def _uses(node: ast.AST, names: set[str]) -> bool:
    return any(_is_clock_call(n) or (isinstance(n, ast.Name) and n.id in names) for n in ast.walk(node))


def _is_rate(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):
        return bool(RATE.search(node.attr))
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return bool(RATE.search(node.slice.value))
    return False


def _is_number(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    if isinstance(node, ast.BinOp):
        return _is_number(node.left) and _is_number(node.right)
    return isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool)


def _is_zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0


def wall_clock_assertions(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of every ``assert`` in ``source`` that orders a wall-clock quantity (a clock call, or a
    name assigned from one in the same function: ``elapsed = time.monotonic() - t0``) or compares a measured rate
    (``fps``, ``..._rate``) with a number."""
    tree = ast.parse(source)
    found = []
    for scope in ast.walk(tree):
        if not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Module):
            continue
        body = list(ast.walk(scope)) if not isinstance(scope, ast.Module) else list(ast.iter_child_nodes(scope))
        clocked: set[str] = set()
        changed = True
        while changed:  # names assigned from a clock, transitively (now = monotonic(); elapsed = now - t0)
            changed = False
            for node in body:
                if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and node.value is not None \
                        and _uses(node.value, clocked):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for t in targets:
                        for n in ast.walk(t):
                            if isinstance(n, ast.Name) and n.id not in clocked:
                                clocked.add(n.id)
                                changed = True
        for node in body:
            if not isinstance(node, ast.Assert):
                continue
            for cmp in (n for n in ast.walk(node.test) if isinstance(n, ast.Compare)):
                operands = [cmp.left, *cmp.comparators]
                if not any(isinstance(op, ORDER) for op in cmp.ops):
                    continue
                if any(_uses(o, clocked) for o in operands) or (  # a rate above 0 says frames flowed, not how fast
                        any(_is_rate(o) for o in operands) and any(_is_number(o) and not _is_zero(o) for o in operands)):
                    found.append((node.lineno, ast.get_source_segment(source, node) or ""))
                    break
    return sorted(set(found))


@pytest.mark.parametrize("text, bad", [
    ("def t():\n    t0 = time.monotonic()\n    f()\n    assert time.monotonic() - t0 < 3.0\n", True),
    ("def t():\n    t0 = time.perf_counter()\n    f()\n    elapsed = time.perf_counter() - t0\n"
     "    assert elapsed >= 0.39\n", True),
    ("def t(src):\n    assert 15.0 < src.fps < 27.0\n", True),
    ("def t(s):\n    assert s['source']['fps'] > 5\n", True),
    ("def t(info):\n    assert 0 < info['delivered_fps'] == info['fps'] < 15\n", True),
    ("def t(src):\n    assert src.nominal_fps == pytest.approx(25.0)\n", False),
    ("def t(frames):\n    assert frames[-1].t - frames[0].t >= 0.4\n", False),  # media time, not a clock
    ("def t(clock):\n    assert clock.now == 3.0\n", False),
    ("def t(th):\n    th.join(30)\n    assert not th.is_alive()\n", False),
    ("def t(s):\n    assert s['camera']['fps'] > 0\n", False),  # frames flowed at all
])
def test_the_scanner_tells_a_wall_clock_assertion(text: str, bad: bool) -> None:
    assert bool(wall_clock_assertions(text)) is bad


def test_no_wall_clock_assertion_under_tests() -> None:
    """Every test file (helpers included) is scanned; a hit names the file and line."""
    hits = [f"{p.relative_to(TESTS)}:{line}: {text}" for p in sorted(TESTS.rglob("*.py"))
            if p.name != Path(__file__).name for line, text in wall_clock_assertions(p.read_text(encoding="utf-8"))]
    assert not hits, "wall-clock assertions (use a fake clock or counts; speed goes to benchmarks/):\n" + "\n".join(hits)


def test_only_ci_guard_reads_the_ci_variable() -> None:
    """``os.environ.get("CI")`` spelled three ways made ``CI=1`` skip what ``CI=true`` failed: one helper now."""
    reads = re.compile(r"""environ(\.get\(|\[)\s*["']CI["']|getenv\(\s*["']CI["']""")
    hits = [f"{p.relative_to(TESTS)}:{i}" for p in sorted(TESTS.rglob("*.py")) if p.name not in ("ci_guard.py",
            Path(__file__).name) for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if reads.search(line)]
    assert not hits, f"read $CI through ci_guard.in_ci() / ci_guard.missing(): {hits}"
