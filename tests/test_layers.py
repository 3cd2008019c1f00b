"""The floors of the house (issue 39): one table of allowed import arrows between kosti's layers, checked over every
module of every package, imports inside functions included (parsed with ``ast``, so nothing is imported).

docs/architecture.md quotes :data:`ARROWS`. A module's layer is its package (``kosti.vision.reader`` → ``vision``),
but the application top — every command-line module (``cli.py``, ``*_cli.py``), the configuration
(``kosti.config``), the model registry and the rest of ``kosti/`` outside ``kosti.common`` — is ``app``, and
``kosti.common`` with the root package (``__version__``) is the floor, ``common``.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: Layer → the layers it may import (besides itself). The one table of one-way arrows: nothing imports ``app``;
#: ``common``, ``models`` and ``engine`` import no other layer.
ARROWS: dict[str, frozenset[str]] = {
    "common": frozenset(),
    "models": frozenset(),
    "engine": frozenset(),
    "vision": frozenset({"common", "models"}),
    "sim": frozenset({"common", "models", "vision"}),
    "datasets": frozenset({"common", "models", "vision", "sim"}),
    "dashboard": frozenset({"common", "models", "engine", "vision", "sim", "datasets"}),
    "app": frozenset({"common", "models", "engine", "vision", "sim", "datasets", "dashboard"}),
}

#: Modules of the dashboard that assemble it from the configuration, as the CLIs do: the application top.
APP_MODULES = {"kosti.dashboard.app"}

#: The few arrows against the table: (module, the layer it may reach) with the reason. An exception that no longer
#: holds fails the test too, so the list only shrinks.
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("kosti.vision.sources", "sim"): "open_source builds the virtual table and the photo replays of sim/ lazily",
}


def modules() -> dict[str, Path]:
    """Every module of the kosti namespace → its file (``pyproject.toml`` ``package-dir`` maps names to folders)."""
    package_dir = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    mapped = {(REPO / folder).resolve() for name, folder in package_dir.items() if name != "kosti"}
    out: dict[str, Path] = {}
    for name, folder in package_dir.items():
        base = (REPO / folder).resolve()
        for p in sorted(base.rglob("*.py")):
            if any(parent in mapped for parent in p.parents if parent != base and base in parent.parents) \
                    or "__pycache__" in p.parts:
                continue
            parts = list(p.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([name, *parts])] = p
    return out


def layer(module: str) -> str:
    """The layer of a kosti module name (see the module docstring)."""
    parts = module.split(".")
    if module in APP_MODULES or parts[-1] == "cli" or parts[-1].endswith("_cli"):
        return "app"
    if len(parts) == 1 or parts[1] == "common" or (len(parts) == 2 and parts[1] == "__init__"):
        return "common"
    return parts[1] if parts[1] in ARROWS else "app"


def imports(module: str, path: Path) -> list[tuple[str, int]]:
    """``(imported kosti module, line)`` for every import in ``path``, at any depth (inside functions too); relative
    imports are resolved against ``module``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                target = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "kosti" or target.startswith("kosti."):
                # ``from kosti import config``: the names may be modules
                names = [f"{target}.{a.name}" for a in node.names] if target == "kosti" else [target]
                found += [(n, node.lineno) for n in names]
        elif isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names if a.name == "kosti" or a.name.startswith("kosti.")]
    return found


def test_every_package_is_found_and_every_module_has_a_layer():
    mods = modules()
    assert {"kosti.common.redact", "kosti.config.reader", "kosti.vision.params", "kosti.engine.game",
            "kosti.dashboard.session", "kosti.datasets.clips", "kosti.sim.virtual", "kosti.models"} <= set(mods)
    assert {layer(m) for m in mods} == set(ARROWS)
    assert layer("kosti.vision.cli") == layer("kosti.config.load") == layer("kosti.registry") == "app"
    assert layer("kosti.common.writable") == layer("kosti") == "common"


def test_imports_follow_the_one_way_arrows():
    mods = modules()
    against, used = [], set()
    for module, path in mods.items():
        for target, line in imports(module, path):
            if target not in mods and target.rsplit(".", 1)[0] in mods:
                target = target.rsplit(".", 1)[0]  # ``from kosti.x import name``: the module kosti.x
            src, dst = layer(module), layer(target)
            if src == dst or dst in ARROWS[src]:
                continue
            if (module, dst) in EXCEPTIONS:
                used.add((module, dst))
                continue
            against.append(f"{path.relative_to(REPO)}:{line} {module} ({src}) imports {target} ({dst})")
    assert against == []
    assert set(EXCEPTIONS) - used == set(), "an exception that no longer exists: remove it from EXCEPTIONS"


def test_the_floor_and_the_engine_import_nothing_else_of_kosti():
    mods = modules()
    for module, path in mods.items():
        if layer(module) in ("common", "engine", "models"):
            outside = [t for t, _ in imports(module, path) if layer(t) != layer(module)]
            assert outside == [], module


#: The evaluation group of ``vision/``: scoring a reader or a pipeline against labelled truth (``kosti eval``,
#: ``kosti watch --truth``, the model card's tables). The live path (``kosti run``: sources → runner → throw detector
#: → reader) imports none of it.
EVAL_MODULES = {"kosti.vision.evaluate", "kosti.vision.evaluate_sets", "kosti.vision.eval_plots", "kosti.vision.truth"}
#: The live path: what ``kosti run`` loads to turn frames into throws.
LIVE_PATH = {"kosti.vision.runner", "kosti.vision.throw_detector", "kosti.vision.continuity", "kosti.vision.reader",
             "kosti.vision.reader_zoom", "kosti.vision.settle", "kosti.vision.vote", "kosti.vision.sources",
             "kosti.vision.hands", "kosti.vision.params", "kosti.vision.recorder", "kosti.vision.pipeline"}


def test_evaluation_stays_apart_from_the_live_path():
    """Evaluation code is apart from the live path: no live module imports an evaluation module, at any depth (the
    modules the live path imports, transitively, include no evaluation module)."""
    mods = modules()
    assert EVAL_MODULES & set(mods) and LIVE_PATH <= set(mods)
    reached, todo = set(), list(LIVE_PATH)
    while todo:
        m = todo.pop()
        if m in reached or m not in mods:
            continue
        reached.add(m)
        for target, _ in imports(m, mods[m]):
            todo.append(target if target in mods else target.rsplit(".", 1)[0])
    assert reached & EVAL_MODULES == set()


def test_every_package_is_listed_for_the_wheel():
    """A package folder missing from ``pyproject.toml`` ``packages`` works in the checkout (editable install) and is
    absent from the wheel the Raspberry Pi installs: each one is listed."""
    tool = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(tool["packages"])
    found = {m for m, p in modules().items() if p.name == "__init__.py"}
    assert found - listed == set()
