"""Run ``kosti`` in a subprocess that may not import torch or Ultralytics (the Raspberry Pi's lean path).

An import hook refuses ``torch``, ``torchvision`` and ``ultralytics`` (and records each attempt); at exit
the child prints one line ``LEAN-GUARD {"attempts": [...], "loaded": [...], "peak_rss_mb": …}`` on
stderr (``peak_rss_mb``: the child's own ``VmHWM``, not ``ru_maxrss``, which Linux carries over from the
forking pytest process). :func:`run_lean` returns the completed process and that record.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HEAVY = ("torch", "torchvision", "ultralytics")

_CHILD = r"""
import atexit, importlib.abc, json, resource, sys
HEAVY = set(%r)
attempts = []

class _Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HEAVY:
            attempts.append(name)
            raise ImportError(f"the lean path may not import {name}")
        return None

sys.meta_path.insert(0, _Refuse())

def _report():
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in HEAVY)
    # VmHWM: this process image's own peak (ru_maxrss keeps the forking parent's RSS across exec,
    # so a child of a big pytest process would report the parent's size)
    try:
        with open("/proc/self/status") as fh:
            rss = next(int(ln.split()[1]) for ln in fh if ln.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sys.stderr.write("LEAN-GUARD " + json.dumps({"attempts": attempts, "loaded": loaded, "peak_rss_mb": rss}) + "\n")

atexit.register(_report)
from kosti.cli import main
sys.exit(main(sys.argv[1:]))
""" % (HEAVY,)


def run_lean(args: list[str], cwd: Path | None = None, timeout: float = 300) -> tuple[subprocess.CompletedProcess, dict]:
    """Run ``kosti ARGS`` under the import guard; returns ``(process, guard record)``."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.run([sys.executable, "-c", _CHILD, *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=timeout)
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("LEAN-GUARD ")]
    assert lines, f"no guard record (rc {proc.returncode}): {proc.stderr[-2000:]}"
    return proc, json.loads(lines[-1][len("LEAN-GUARD "):])
