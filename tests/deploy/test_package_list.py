"""pyproject.toml's package list (issue 12): a wheel holds only the packages ``[tool.setuptools] packages``
names, while the editable install of the venv finds every folder; so a subpackage missing from the list
works in development and is absent after ``pip install kosti``. Every folder with an ``__init__.py`` under
a mapped folder (``package-dir``) must be listed, every listed package must exist, and each package-data
entry must name a listed package."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _setuptools() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def _folder_of(package: str, package_dir: dict[str, str]) -> Path:
    """Folder of a dotted package under ``package-dir``'s longest matching prefix (setuptools' rule)."""
    parts = package.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in package_dir:
            return REPO / package_dir[prefix] / Path(*parts[n:])
    return REPO / Path(*parts)


def _python_folders(package_dir: dict[str, str]) -> dict[str, Path]:
    """Dotted name → folder of every package (a folder with an ``__init__.py``) under the mapped folders,
    hidden folders aside (an exported model folder's loose script, e.g. NCNN's ``model_ncnn.py``, is data)."""
    found: dict[str, Path] = {}
    for package, folder in package_dir.items():
        root = REPO / folder
        for py in root.rglob("__init__.py"):
            rel = py.parent.relative_to(root)
            if any(p.startswith(".") for p in rel.parts):
                continue
            found[".".join((package, *rel.parts))] = py.parent
    return found


def test_every_package_folder_under_the_mapped_folders_is_in_the_package_list():
    st = _setuptools()
    listed = set(st["packages"])
    missing = sorted(set(_python_folders(st["package-dir"])) - listed)
    assert missing == [], f"add to [tool.setuptools] packages in pyproject.toml: {missing}"


def test_every_listed_package_is_a_folder_and_package_data_names_listed_packages():
    st = _setuptools()
    absent = [p for p in st["packages"] if not _folder_of(p, st["package-dir"]).is_dir()]
    assert absent == []
    assert sorted(set(st.get("package-data", {})) - set(st["packages"])) == []


def test_the_check_sees_the_known_subpackages():
    """The walk finds the subpackages by itself (a check that found nothing could not fail)."""
    found = _python_folders(_setuptools()["package-dir"])
    assert {"kosti.engine.games", "kosti.dashboard.routes", "kosti.sim"} <= set(found)
    assert found["kosti.dashboard.routes"] == REPO / "dashboard" / "routes"
