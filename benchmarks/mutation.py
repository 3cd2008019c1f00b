"""Mutation testing of kosti's core (issue 45): how many small wrong changes of a module its own tests catch.

Slow (one pytest run per mutant), so a benchmark, not a CI gate. Uses cosmic-ray (``pip install cosmic-ray``, a
well-kept mutation tool: it makes every one-token change its operators know — a comparison flipped, a number off
by one, ``and`` for ``or``, a statement removed — and runs a test command against each).

It never touches this checkout: the committed tree of ``--rev`` (others' uncommitted edits stay out) is copied to a
scratch folder, the ``kosti`` namespace is laid out there as installed (pyproject ``package-dir``, as
``scripts/typecheck`` does) and put first on ``PYTHONPATH``, and cosmic-ray mutates the copy. Each mutant runs only
the module's own test files (``-x``, ``-p no:randomly``, in the order listed), so the score says what *those* tests
catch. The tests of a mutant run forked from one interpreter that imported the third-party packages once
(:func:`forked_exec`, same mutations and results as ``cosmic-ray exec``; ``--no-fork`` runs that instead), and the
test file that failed first is kept (``killed_by``): with a module's new test file listed last, one run gives both
the score of the old files ("before") and of all ("after").

Usage::

    nice -n 10 .venv/bin/python benchmarks/mutation.py                 # every module of CORE, one after another
    nice -n 10 .venv/bin/python benchmarks/mutation.py access session  # some of them, by key
    .venv/bin/python benchmarks/mutation.py --list                     # the keys, modules, functions and tests
    nice -n 10 .venv/bin/python benchmarks/mutation.py reader --recheck tests/vision/test_reader_decisions.py
        # each survivor of build/mutation/reader.json applied to HEAD and run against the new tests ("by hand")

Writes ``build/mutation/<key>.json`` (score, counts, and the diff of every surviving mutant) and prints one line
per module: ``key  killed/total  score %``. A mutant whose tests time out counts as killed (cosmic-ray's rule);
one that cannot even be imported ("incompetent") is left out of the score.

Measured (issue 45, on the loaded 2-core development machine, load 20-27; "before" = the tests before the issue's
new ones, "after" = the commit named; equivalent survivors are listed and count as survivors in the score):

=========  ==========================  ==================  ==================  ========================================
key        functions                   before              after               survivors judged equivalent (after)
=========  ==========================  ==================  ==================  ========================================
access     PinGuard, host names,       60/76  79.0 %       66/67  98.5 %       ``-> AccessError & None``: an annotation,
           ``request_allowed``         (``--rev b9af7d8``) (0b5e586)           never evaluated (``from __future__``)
session    ``submit_throw``            31/50  62.0 %       45/50  90.0 %       JPEG quality 85±1 and thumbnail quality
                                       (``--rev b9af7d8``) (e1abc77)           70±1 (4: bytes, no behaviour);
                                                                               not killed: ``except TableError`` after
                                                                               every check passed (no input reaches it)
scoring    ``_kind_points``,           251/263  95.4 %     257/263  97.7 %     ``max(pts or ±1, six_ones_value)`` (run
           ``combination_catalog``,                        (d523fb8);          only when six_ones_value ≥ 1), ``int &
           ``_instant_win``                                258/263  98.1 %     None`` (an annotation);
                                                           (a2f34c8, 1 more    ``three_ones_value or ±1`` (rules.md
                                                           killed by hand)     gives 300 or 1000, never 0 or None)
turn       engine/turn.py (all)        108/190  56.8 %     165/190  86.8 %     ``player != … and extra != … or not
                                                           (8739617);          scored`` (a changed turn is a fresh,
                                                           187/190  98.4 %     unscored one), ``hot=True`` before a
                                                           (d930659, 22 more   bust's end (end_turn reads hot only for
                                                           killed by hand)     a stop), ``/, announce`` (every call
                                                                               passes it by keyword); not killed:
                                                                               ``first = not scored or points == 0``
                                                                               (only a 0-point keep on a turn's first
                                                                               throw of two dice: F2 high stakes with
                                                                               ID-A's double zero)
vote       ``vote``, ``check_throw``,  39/70  55.7 %       209/247  84.6 %     23: start key ``(-1, -1.0)`` changed to
           ``recover_dice``            (a sample,          (d523fb8);          another key below every reading (9),
                                       ``--rev 8e0aeca``)  224/247  90.7 %     ``range(1, 8)``, ``best == -1``, mean p
                                                           (f98a1b8, 15        of an unread die ±1 (unused),
                                                           more killed by      ``break``→``continue`` once the sorted
                                                           hand)               IoUs fall below the bar,
                                                                               ``reshape(-2, 4)`` (numpy: any negative
                                                                               is "the rest"), ``b[-1]`` of a one-row
                                                                               array, ``n >= 1`` (no pair to compare),
                                                                               5 annotations ``& None``
reader     ``decide``,                 102/135  75.6 %     132/135  97.8 %     ``if k == -1`` (numpy reads a (0, 7)
           ``second_look``,            (26d7df9; the ONNX  (0001e6d, 30        array to the same empty arrays),
           ``dice_mask``,              file killed none)   killed by hand by   ``np.zeros(1)`` for a single-model
           ``one_box_per_die``,                            ``test_reader_      frame with no box (a length-1 array
           ``_read_with``                                  decisions``)        broadcasts against the empty masks),
                                                                               ``values == -1`` (a face-0 class reads
                                                                               0 either way)
settle     ``SettleDetector.update``,  110/208  52.9 %     172/208  82.7 %     10: 2 annotations ``& None``, default
           ``_camera_motion``          (first 208 of 278   (1105ac4, test_     ``max_shift=1.0`` (every caller passes
           (the decision logic; the    in random order,    settle_rules        it), ``gain == 0.0``/``2.0`` (at gain 1
           module's other 567 left     stopped for time,   08b85fe);           the second blur is ``raw``), ``or`` in
           out for time)               1105ac4)            189/208  90.9 %     two guards (ref is None exactly while
                                                           (264f921, 17 more   moving; a pose only at rest), ``drift >=
                                                           killed by hand)     0.5·drift_fraction`` (21.6 of 14,400 px:
                                                                               no count equals it), ``_ref_pts`` off
                                                                               (a cache: the same reference's corners
                                                                               are found again), ``max(-1.0, …)`` (t
                                                                               never decreases); not killed: 6 bounds
                                                                               met only by equal floats (phase
                                                                               response 0.2, shift 0.1, angle and
                                                                               shift limits, per-die still time,
                                                                               motion 0.5), the stale-pose branch's
                                                                               ``<=``/``or`` (no believed pose from
                                                                               the rest), die boxes not moved by the
                                                                               pose (compared aligned: barely matters)
=========  ==========================  ==================  ==================  ========================================

"Killed by hand": each mutant that survived a run and was killed by a test committed after the run started was
applied to a copy of the tree and run against that test file (it fails). Before = the mutants killed by the old test
files (for scoring and turn, from ``killed_by`` of the same run, the new file listed last: ``test_scoring_catalog_rules``
killed 6 scoring mutants the oracle could not see, ``test_turn_rules`` 57 turn mutants). The vote's "before" is the
first 70 mutants (cosmic-ray takes them in random order) of a run at ``--rev 8e0aeca``, stopped for lack of machine
time: each survivor runs the whole pipeline test set (~15 s of CPU).
The vote target leaves out ``test_skovy_replayed_as_a_camera_recovers_the_missed_red_die`` (470 s under load; one run
per surviving mutant would take hours). The three mutants issue 45 names were each applied by hand and fail their new
tests. Reader and settle (load 4-6, the runs at ``nice -n 10``): ``mutation.py reader`` took 2,403 s (unit file first:
it killed 98, the ONNX file none, 4 failed before a test ran); its "after" is ``mutation.py reader --recheck
tests/vision/test_reader_decisions.py``. ``mutation.py settle`` (new file listed last: before/after from ``killed_by``)
ran 208 of its 278 mutants in 43 min and was stopped for time; ``build/mutation/settle.json`` was written from its
session, then ``--recheck tests/vision/test_settle_rules.py`` at 264f921 killed 17 more survivors (a 2.5° turn, a zoom
about the corner, the 7 px drift from the rest, a cut after a rest, the pose taken only when it explains the drift …).
Settle's per-die helpers (``set_focus``, ``_die_change``), the corner tracker and ``_changed_warped`` were not mutated.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Target:
    """One module under mutation: its path in the checkout, the functions mutated (``Class.method`` or a
    function; empty = the whole module) and the test files (or node ids / ``-k`` arguments) that must catch it."""

    path: str
    functions: tuple[str, ...]
    tests: tuple[str, ...]


#: The core modules of issue 45, each with the functions a table relies on and its own tests.
CORE: dict[str, Target] = {
    "scoring": Target("engine/scoring_catalog.py", ("_kind_points", "combination_catalog", "_instant_win"),
                      ("tests/engine/test_scoring_vectors.py", "tests/engine/test_scoring.py",
                       "tests/engine/test_scoring_properties.py", "tests/engine/test_scoring_catalog_rules.py")),
    "turn": Target("engine/turn.py", (), ("tests/engine/test_game.py", "tests/engine/test_game_vectors.py",
                                          "tests/engine/test_turn_rules.py")),
    "session": Target("dashboard/session.py", ("GameSession.submit_throw",),
                      ("tests/dashboard/test_dashboard_api.py", "tests/dashboard/test_corrections.py", "-k",
                       "'throw or uncertain or count or pending or confirm or fix or corrections'")),
    "access": Target("dashboard/access.py", ("PinGuard.check", "PinGuard.locked_for", "PinGuard._forget",
                                             "allowed_host_names", "_split_host", "_is_ip", "request_allowed"),
                     ("tests/dashboard/test_hardening.py", "tests/dashboard/test_access_rules.py", "-k",
                      "'pin or host or origin or foreign or access_rules'")),
    "reader": Target("vision/reader.py", ("DiceReader.decide", "DiceReader.second_look", "DiceReader.dice_mask",
                                          "DiceReader.one_box_per_die", "DiceReader._read_with"),
                     ("tests/vision/test_reader_unit.py", "tests/vision/test_reader_onnx.py",
                      "tests/vision/test_reader_decisions.py")),
    # settle: the state machine (``update``: motion, still, rest, drift, the rest judged on the dice) and the judge of
    # the camera's own motion (``_camera_motion``: believed or not); the module's other 567 mutants (the corner
    # tracker's OpenCV tuning, ``_changed_warped``, ``_die_change``, ``set_focus``, the constructor's checks) are left
    # out for the machine time (a survivor costs a full pass of the tests, ~10 s of CPU)
    "settle": Target("vision/settle.py", ("SettleDetector.update", "_camera_motion"),
                     ("tests/vision/test_settle.py", "tests/vision/test_settle_rules.py")),
    "vote": Target("vision/vote.py", ("vote", "check_throw", "recover_dice"),
                   ("tests/vision/test_vote_rules.py", "tests/vision/test_pipeline.py",
                    "tests/vision/test_pipeline_recovery.py", "-k",
                    "'not skovy_replayed'")),
}


#: The budget: cosmic-ray replaces a binary operator by every other one and a comparison by every other one (11 and
#: 9 mutants per site, mostly redundant: ``-`` → ``**``, ``>>``, ``^`` …). Only the natural replacement is kept (the
#: one mutmut makes: ``+`` ↔ ``-``, ``*`` ↔ ``/``, ``&`` ↔ ``|``) and, for a comparison, its boundary and its negation
#: (``<`` → ``<=`` and ``>=``; ``==`` → ``!=``); every other operator (numbers, ``not``, ``and``/``or``, exceptions,
#: loops, constants) is kept whole. ``--all-operators`` runs everything.
NATURAL_BINARY = {"Add": "Sub", "Sub": "Add", "Mul": "Div", "Div": "Mul", "FloorDiv": "Div", "Mod": "Div",
                  "Pow": "Mul", "LShift": "RShift", "RShift": "LShift", "BitAnd": "BitOr", "BitOr": "BitAnd",
                  "BitXor": "BitAnd", "MatMult": "Mul"}
NATURAL_COMPARISON = {"Lt": ("LtE", "GtE"), "LtE": ("Lt", "Gt"), "Gt": ("GtE", "LtE"), "GtE": ("Gt", "Lt"),
                      "Eq": ("NotEq",), "NotEq": ("Eq",), "Is": ("IsNot",), "IsNot": ("Is",), "In": ("NotIn",),
                      "NotIn": ("In",)}


def in_budget(operator: str) -> bool:
    """Whether a cosmic-ray operator name (``core/ReplaceBinaryOperator_Sub_Add``) is run under the budget."""
    name = operator.split("/")[-1]
    for prefix, natural in (("ReplaceBinaryOperator_", NATURAL_BINARY), ("ReplaceComparisonOperator_",
                                                                          NATURAL_COMPARISON)):
        if name.startswith(prefix):
            src, _, dst = name[len(prefix):].partition("_")
            want = natural.get(src, ())
            return dst == want if isinstance(want, str) else dst in want
    return True


def function_lines(source: str, names: tuple[str, ...]) -> list[tuple[int, int]]:
    """1-based inclusive line ranges of the named functions (``f`` or ``Class.f``) in ``source``.

    Raises ``KeyError`` naming a function that is not there (a renamed function must not silently leave the
    module unmutated)."""
    found: dict[str, tuple[int, int]] = {}
    tree = ast.parse(source)

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found[prefix + node.name] = (node.lineno, node.end_lineno or node.lineno)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    missing = [n for n in names if n not in found]
    if missing:
        raise KeyError(f"not in the module: {', '.join(missing)}")
    return [found[n] for n in names]


def copy_tree(dest: Path, rev: str, tests_rev: str | None, tests: tuple[str, ...]) -> None:
    """Extract the committed tree of ``rev`` to ``dest`` (others' uncommitted edits in this checkout stay out), and
    with ``tests_rev`` the given test files as they were at that revision (the "before" of a change of tests);
    ``dest/../shared`` links to the shared data beside this checkout."""
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", rev], cwd=REPO, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    for name in tests if tests_rev else ():
        old = subprocess.run(["git", "show", f"{tests_rev}:{name}"], cwd=REPO, capture_output=True)
        if old.returncode == 0:
            (dest / name).write_bytes(old.stdout)
    if (REPO.parent / "shared").is_dir():
        (dest.parent / "shared").symlink_to(REPO.parent / "shared")


def lay_out_namespace(copy: Path, ns: Path) -> None:
    """``ns/kosti``: the installed layout of the copy (pyproject ``package-dir``), symlinks into ``copy``."""
    package_dir = tomllib.loads((copy / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    top = ns / "kosti"
    top.mkdir(parents=True)
    for entry in sorted((copy / package_dir["kosti"]).iterdir()):
        if entry.suffix == ".py" or (entry / "__init__.py").is_file():  # kosti/*.py and subpackages (kosti.config)
            (top / entry.name).symlink_to(entry)
    for name, folder in package_dir.items():
        if name != "kosti":
            (ns / Path(*name.split("."))).symlink_to(copy / folder)


def run_target(key: str, target: Target, copy: Path, env: dict[str, str], timeout_s: float,
               all_operators: bool = False, count_only: bool = False, fork: bool = True) -> dict[str, object]:
    """Mutate one module in ``copy`` with cosmic-ray and return its counts, score and surviving diffs."""
    from cosmic_ray.work_db import WorkDB, use_db  # type: ignore[import-untyped,import-not-found,unused-ignore]
    from cosmic_ray.work_item import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
        TestOutcome,
        WorkerOutcome,
        WorkResult,
    )

    work = copy / "build" / "mutation"
    work.mkdir(parents=True, exist_ok=True)
    pytest_bin = Path(sys.executable).with_name("pytest")
    # a test file the revision does not have yet (a "before" of new tests) is left out of the command
    tests = [t for t in target.tests if not t.startswith("tests/") or (copy / t.split("::")[0]).exists()]
    command = f"{pytest_bin} -x -q -p no:randomly -p no:cacheprovider " + " ".join(tests)
    config = work / f"{key}.toml"
    config.write_text(
        "[cosmic-ray]\n"
        f"module-path = {json.dumps(str(copy / target.path))}\n"
        f"timeout = {timeout_s}\n"
        "excluded-modules = []\n"
        f"test-command = {json.dumps(command)}\n"
        "[cosmic-ray.distributor]\nname = \"local\"\n", encoding="utf-8")
    session = work / f"{key}.sqlite"
    session.unlink(missing_ok=True)
    cr = [str(Path(sys.executable).with_name("cosmic-ray"))]
    baseline = subprocess.run(["true"] if count_only else shlex.split(command), cwd=copy, env=env,
                              capture_output=True, text=True)
    if baseline.returncode != 0:
        raise RuntimeError(f"{key}: the unmutated tests fail, nothing to measure:\n{baseline.stdout[-2000:]}")
    subprocess.run([*cr, "init", str(config), str(session)], cwd=copy, env=env, check=True)
    ranges = function_lines((copy / target.path).read_text(), target.functions) if target.functions else None
    with use_db(str(session), WorkDB.Mode.open) as db:
        skip = [item.job_id for item in db.pending_work_items
                if (ranges is not None and not any(a <= item.mutations[0].start_pos[0] <= b for a, b in ranges))
                or not (all_operators or in_budget(item.mutations[0].operator_name))]
        if skip:
            db.set_multiple_results(skip, WorkResult(worker_outcome=WorkerOutcome.SKIPPED))
        pending = sum(1 for _ in db.pending_work_items)
    if count_only:
        return {"module": target.path, "mutants": pending}
    t0 = time.monotonic()
    if fork:
        subprocess.run([sys.executable, str(Path(__file__).resolve()), "--exec-session", str(session), command,
                        str(timeout_s)], cwd=copy, env={**env, "PYTHONDONTWRITEBYTECODE": "1"}, check=True)
    else:
        subprocess.run([*cr, "exec", str(config), str(session)], cwd=copy, env=env, check=True)
    elapsed = time.monotonic() - t0
    counts = {"killed": 0, "survived": 0, "incompetent": 0}
    survivors = []
    killed_by: dict[str, int] = {}  # test file of the first failure (forked runs), "timeout" or "?"
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            if result.test_outcome == TestOutcome.KILLED:
                counts["killed"] += 1
                out = (result.output or "").split()
                by = "timeout" if out == ["timeout"] else out[2].split("::")[0] if len(out) > 2 else "?"
                killed_by[by] = killed_by.get(by, 0) + 1
            elif result.test_outcome == TestOutcome.SURVIVED:
                counts["survived"] += 1
                m = item.mutations[0]
                survivors.append({"line": m.start_pos[0], "operator": m.operator_name, "function": m.definition_name,
                                  "diff": (result.diff or "").replace(str(copy) + "/", "")})
            else:
                counts["incompetent"] += 1
    scored = counts["killed"] + counts["survived"]
    return {"module": target.path, "functions": list(target.functions), "tests": tests,
            "command": command.replace(str(pytest_bin), "pytest"), **counts,
            "score": round(counts["killed"] / scored, 4) if scored else None, "seconds": round(elapsed),
            "killed_by": dict(sorted(killed_by.items())),
            "survivors": sorted(survivors, key=lambda s: s["line"])}


#: Imported once by the forked executor before any mutant (third-party only: ``kosti`` and the tests must be imported
#: fresh by each mutant's child, from the mutated copy).
PRELOAD = ("numpy", "pytest", "_pytest.python", "_pytest.fixtures", "hypothesis", "cv2", "PIL.Image", "pydantic",
           "onnxruntime", "sqlalchemy")


def _forked_tests(command: str, timeout: float) -> tuple[object, str]:
    """cosmic-ray's ``run_tests`` in a forked child of this (preloaded) process: ``pytest.main`` of ``command``'s
    arguments in a new session; ``(TestOutcome, output)`` by cosmic-ray's rules (non-zero exit or a timeout =
    killed). Saves the interpreter start and the third-party imports (~2 s of CPU) per mutant."""
    import signal

    from cosmic_ray.work_item import TestOutcome  # type: ignore[import-untyped,import-not-found,unused-ignore]

    args = shlex.split(command)[1:]
    first_failure = tempfile.NamedTemporaryFile(prefix="kosti-mutant-", delete=False)
    first_failure.close()
    pid = os.fork()
    if pid == 0:  # the child: its own process group, quiet, no .pyc of the mutant
        code = 3
        try:
            os.setsid()
            sys.dont_write_bytecode = True
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            import pytest

            class FirstFailure:
                """Writes the node id of the first failing test (which test file killed the mutant)."""

                def pytest_runtest_logreport(self, report: Any) -> None:
                    if report.failed and not Path(first_failure.name).stat().st_size:
                        Path(first_failure.name).write_text(report.nodeid)

            code = int(pytest.main(args, plugins=[FirstFailure()]))
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            failed = Path(first_failure.name).read_text()
            os.unlink(first_failure.name)
            return (TestOutcome.KILLED if code != 0 else TestOutcome.SURVIVED), f"exit {code} {failed}".strip()
        if time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.unlink(first_failure.name)
            return TestOutcome.KILLED, "timeout"
        time.sleep(0.05)


def forked_exec(session: Path, command: str, timeout: float) -> None:
    """Run every pending mutant of a cosmic-ray session like ``cosmic-ray exec`` (same mutation code, same
    results in the session), with each test run forked from this process after :data:`PRELOAD`. Run with the
    copy as the working directory and its namespace first on ``PYTHONPATH``."""
    import importlib

    import cosmic_ray.mutating as mutating  # type: ignore[import-untyped,import-not-found,unused-ignore]
    from cosmic_ray.work_db import WorkDB, use_db  # type: ignore[import-untyped,import-not-found,unused-ignore]

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    if any(m == "kosti" or m.startswith("kosti.") for m in sys.modules):
        raise RuntimeError("kosti imported before the mutants: each child must import the mutated copy")
    outcome, output = _forked_tests(command, timeout)  # the unmutated copy must pass forked too
    if output != "exit 0":
        raise RuntimeError(f"the unmutated tests fail when forked ({output}): {command}")
    mutating.run_tests = _forked_tests
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item in db.pending_work_items:
            db.set_result(item.job_id, mutating.mutate_and_test(item.mutations, command, timeout))


def recheck(key: str, survivors: list[dict[str, Any]], rev: str, tests: list[str],
            timeout_s: float) -> list[dict[str, Any]]:
    """Each surviving mutant of an earlier run (``survivors`` of ``build/mutation/<key>.json``) applied to a fresh
    copy of ``rev`` and run against ``tests`` (``-x``, as a run does): the survivors, each with ``killed_by`` (the
    first failing test's node id, ``"timeout"``) or None where it survives those tests too. How a mutant that
    survived a run is shown killed by a test committed after the run started ("killed by hand")."""
    import shutil

    out = []
    with tempfile.TemporaryDirectory(prefix="kosti-recheck-") as tmp:
        copy, ns = Path(tmp) / "repo", Path(tmp) / "ns"
        copy_tree(copy, rev, None, ())
        lay_out_namespace(copy, ns)
        env = {**os.environ, "PYTHONPATH": str(ns), "YOLO_OFFLINE": "1", "MPLBACKEND": "Agg",
               "PYTHONDONTWRITEBYTECODE": "1"}
        env.pop("CI", None)
        module = copy / CORE[key].path
        original = module.read_bytes()
        pytest_bin = str(Path(sys.executable).with_name("pytest"))  # not ``python -m``: the copy's folder off sys.path
        for s in survivors:
            module.write_bytes(original)
            hunks = [line for line in s["diff"].splitlines() if not line.startswith(("---", "+++"))]
            patch = subprocess.run(["patch", "-s", "-o", "-", str(module)], input="--- a\n+++ b\n" + "\n".join(hunks)
                                   + "\n", text=True, capture_output=True)
            if patch.returncode != 0:
                raise RuntimeError(f"{key}: the mutant of line {s['line']} no longer applies to {rev[:7]}")
            module.write_text(patch.stdout)
            try:
                run = subprocess.run([pytest_bin, "-x", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", *tests],
                                     cwd=copy, env=env, capture_output=True, text=True, timeout=timeout_s)
            except subprocess.TimeoutExpired:
                out.append({**s, "killed_by": "timeout"})
                continue
            if run.returncode not in (0, 1):
                raise RuntimeError(f"{key}: the tests could not run (exit {run.returncode}):\n{run.stdout[-1500:]}")
            failed = [ln.split()[1] for ln in run.stdout.splitlines() if ln.startswith("FAILED ")]
            out.append({**s, "killed_by": (failed[0] if failed else "?") if run.returncode else None})
        module.write_bytes(original)
        shutil.rmtree(copy / "build", ignore_errors=True)
    return out


def _commit(rev: str) -> str:
    """The full hash of ``rev``."""
    return subprocess.run(["git", "rev-parse", rev], cwd=REPO, check=True, capture_output=True, text=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    """Run the mutation test of the named :data:`CORE` keys (all when none); exit 2 on an unknown key."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("keys", nargs="*", help=f"modules to mutate (default: all of {', '.join(CORE)})")
    ap.add_argument("--out", type=Path, default=REPO / "build" / "mutation", help="folder for <key>.json")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds one mutant's tests may take (then killed)")
    ap.add_argument("--rev", default="HEAD", help="the committed revision to mutate (default HEAD)")
    ap.add_argument("--tests-rev", help="take the module's test files from this revision instead (a 'before')")
    ap.add_argument("--all-operators", action="store_true", help="every cosmic-ray operator, not only the budget's")
    ap.add_argument("--count", action="store_true", help="only count the mutants each module would run")
    ap.add_argument("--list", action="store_true", help="print the targets and exit")
    ap.add_argument("--no-fork", action="store_true",
                    help="run each mutant's tests with cosmic-ray exec (a fresh interpreter each) instead of forked")
    ap.add_argument("--recheck", nargs="+", metavar="TEST",
                    help="apply each survivor of <out>/<key>.json to the committed tree and run these tests instead")
    ap.add_argument("--exec-session", nargs=3, metavar=("SESSION", "COMMAND", "TIMEOUT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.exec_session:
        session, command, timeout = args.exec_session
        forked_exec(Path(session), command, float(timeout))
        return 0
    unknown = [k for k in args.keys if k not in CORE]
    if unknown:
        print(f"mutation.py: unknown module key(s) {', '.join(unknown)}; choose from {', '.join(CORE)}",
              file=sys.stderr)
        return 2
    if args.list:
        for key, t in CORE.items():
            print(f"{key:8} {t.path}  [{', '.join(t.functions) or 'whole module'}]  <- {' '.join(t.tests)}")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    rev = _commit(args.rev)  # the commit mutated (HEAD moves while a run lasts)
    if args.recheck:
        for key in args.keys or list(CORE):
            saved = args.out / f"{key}.json"
            result = json.loads(saved.read_text())
            rechecked = recheck(key, result["survivors"], rev, args.recheck, args.timeout)
            for s in rechecked:
                print(f"{key:8} line {s['line']:4} {s['operator'].split('/')[-1]:40} "
                      f"{'survives' if s['killed_by'] is None else 'killed by ' + s['killed_by']}", flush=True)
            result["recheck"] = {"rev": rev, "tests": args.recheck, "survivors": rechecked}
            saved.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
            left = sum(s["killed_by"] is None for s in rechecked)
            total = result["killed"] + result["survived"]
            print(f"{key:8} {total - left}/{total} killed with {' '.join(args.recheck)} "
                  f"({100 * (total - left) / total:.1f} %)", flush=True)
        return 0
    for key in args.keys or list(CORE):
        target = CORE[key]
        with tempfile.TemporaryDirectory(prefix="kosti-mutation-") as tmp:
            copy, ns = Path(tmp) / "repo", Path(tmp) / "ns"
            copy_tree(copy, rev, args.tests_rev, target.tests)
            lay_out_namespace(copy, ns)
            env = {**os.environ, "PYTHONPATH": str(ns), "YOLO_OFFLINE": "1", "MPLBACKEND": "Agg"}
            env.pop("CI", None)
            result = run_target(key, target, copy, env, args.timeout, args.all_operators, args.count,
                                fork=not args.no_fork)
            if args.count:
                print(f"{key:8} {result['mutants']} mutants to run", flush=True)
                continue
            result["operators"] = "all" if args.all_operators else "budget (NATURAL_BINARY, NATURAL_COMPARISON)"
            result["runner"] = "cosmic-ray exec" if args.no_fork else "forked (forked_exec)"
            result.update(rev=rev, tests_rev=_commit(args.tests_rev) if args.tests_rev else None)
            (args.out / f"{key}.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
            total = result["killed"] + result["survived"]  # type: ignore[operator]
            score = "n/a" if result["score"] is None else f"{100 * result['score']:.1f} %"  # type: ignore[operator]
            print(f"{key:8} {result['killed']}/{total} killed  {score}  ({result['survived']} survived, "
                  f"{result['incompetent']} incompetent, {result['seconds']} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
