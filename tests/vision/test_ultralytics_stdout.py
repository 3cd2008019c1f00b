"""``--backend ultralytics``: Ultralytics' own log lines go to stderr, never into a ``--json`` stdout (cli.md:
"nothing but the one JSON document reaches stdout whatever the backend")."""

from __future__ import annotations

import json
import subprocess
import sys

import ci_guard
import cv2
from reader_models import REPO

from kosti.sim.synthetic import synthetic_frame

ci_guard.need_module("ultralytics", "the Ultralytics backend needs the 'train' extra")

DET, CLS = REPO / "models" / "dice_det.onnx", REPO / "models" / "dice_cls.onnx"


def test_ultralytics_logger_writes_to_stderr(capfd):
    from kosti.common.ultralytics_env import import_ultralytics

    import_ultralytics()
    from ultralytics.utils import LOGGER

    LOGGER.info("kosti-test: Loading model for ONNX Runtime inference...")
    for h in LOGGER.handlers:
        h.flush()
    out, err = capfd.readouterr()
    assert "kosti-test" not in out and "kosti-test" in err


def test_read_json_backend_ultralytics_stdout_is_only_json(tmp_path):
    ci_guard.shipped(DET, "shipped detector weights")
    ci_guard.shipped(CLS, "shipped classifier weights")
    img = tmp_path / "frame.jpg"
    cv2.imwrite(str(img), synthetic_frame(640, 480, 3, 60, seed=3)[0])
    r = subprocess.run([sys.executable, "-m", "kosti", "read", "--json", "--backend", "ultralytics",
                        "--model", str(DET), "--cls-model", str(CLS), str(img)],
                       capture_output=True, text=True, cwd=REPO, timeout=300)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)  # nothing else on stdout
    assert isinstance(doc, list) and len(doc) == 1 and doc[0]["width"] == 640
    assert "ONNX Runtime" in r.stderr  # Ultralytics' log lines, on stderr
