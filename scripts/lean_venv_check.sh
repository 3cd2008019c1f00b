#!/usr/bin/env bash
# The Pi's lean runtime in a fresh venv: base dependencies + ncnn, no torch, no Ultralytics (issue 16).
# Compares kosti read --backend ncnn with onnx on byler-d6 test and measures kosti run (virtual table, ncnn);
# exits non-zero when NCNN reads more dice differently from the (INT8) ONNX reader than 8-bit rounding explains,
# a box IoU < 0.75 or an NCNN peak RSS > 300 MB (benchmarks/lean_read_check.py).
# Usage: bash scripts/lean_venv_check.sh [VENV_DIR]   (default /tmp/kosti-leanvenv; needs PyPI or a mirror)
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${1:-/tmp/kosti-leanvenv}
python3 -m venv "$VENV"
deps=$(python3 - <<'PY'
import tomllib
print(" ".join(repr(d) for d in tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]))
PY
)
eval "\"$VENV/bin/pip\" install -q $deps 'ncnn>=1.0.20240410'"
"$VENV/bin/pip" install -q --no-deps --force-reinstall .
"$VENV/bin/python" benchmarks/lean_read_check.py "$VENV/bin/kosti"
