"""Run ``kosti`` in a subprocess where every network attempt fails and is recorded.

Before kosti is imported, the child replaces ``socket.getaddrinfo``, ``gethostbyname``, ``create_connection``
and ``socket.connect``/``connect_ex`` (all but Unix-domain sockets) with functions that record the attempt
(with the innermost frames of its stack) and raise ``OSError``. Forked workers inherit the patches. At exit
each attempt is appended to a log file (forked workers included) that :func:`run_guarded` returns. The environment is the caller's minus
``YOLO_OFFLINE``, so kosti must switch Ultralytics offline by itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_CHILD = r"""
import json, os, socket, sys, traceback

LOG = os.environ["NET_GUARD_LOG"]

def _record(what):
    stack = "".join(traceback.format_stack(limit=8)[:-2])
    with open(LOG, "a", encoding="utf-8") as f:  # a file, so forked workers' attempts are seen too
        f.write(json.dumps({"call": what, "pid": os.getpid(), "stack": stack[-1500:]}) + "\n")

def _refuse(name):
    def refused(*args, **kwargs):
        _record(f"{name}{args[:2]!r}")
        raise OSError(f"network access refused by the test guard: {name}")
    return refused

for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "create_connection"):
    setattr(socket, name, _refuse(name))

_connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex

def connect(self, address):
    if self.family == getattr(socket, "AF_UNIX", None):
        return _connect(self, address)
    _record(f"connect({address!r})")
    raise OSError("network access refused by the test guard: connect")

def connect_ex(self, address):
    if self.family == getattr(socket, "AF_UNIX", None):
        return _connect_ex(self, address)
    _record(f"connect_ex({address!r})")
    return 111

socket.socket.connect, socket.socket.connect_ex = connect, connect_ex
from kosti.cli import main
sys.exit(main(sys.argv[1:]))
"""


def run_guarded(args: list[str], env: dict[str, str] | None = None, cwd: Path | None = None,
                timeout: float = 900) -> tuple[subprocess.CompletedProcess, list[dict]]:
    """Run ``kosti ARGS`` under the network guard; returns ``(process, attempts)``."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="kosti-netguard-") as tmp:
        log = Path(tmp) / "attempts.jsonl"
        child_env = {k: v for k, v in os.environ.items() if k != "YOLO_OFFLINE"}
        child_env.update(env or {}, NET_GUARD_LOG=str(log))
        proc = subprocess.run([sys.executable, "-c", _CHILD, *args], capture_output=True, text=True, cwd=cwd,
                              env=child_env, timeout=timeout)
        attempts = [json.loads(ln) for ln in log.read_text().splitlines()] if log.exists() else []
    return proc, attempts


def one_json_document(stdout: str):
    """Parse ``stdout`` as exactly one JSON document (whitespace around it allowed); fails otherwise."""
    return json.loads(stdout)
