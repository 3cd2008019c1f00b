#!/usr/bin/env bash
# Rebuild the shipped dice reader (models/dice_det.*, models/dice_cls.*) from the shared real photos,
# on the CPU, exactly as described in models/README.md. Checkpoints live in runs/build (git-ignored):
# rerun the same command after an interruption and Ultralytics resumes from the last epoch.
# Usage: bash scripts/build_models.sh [EPOCHS_DET] [EPOCHS_CLS]
set -euo pipefail
cd "$(dirname "$0")/.."
S=${KOSTI_SHARED:-../shared/datasets}
.venv/bin/kosti train --from-scratch --holdout 0 \
  --data "$S/byler-d6/data.yaml:train" --data "$S/rune55-dedup/data.yaml:train" \
  --val "$S/rune55-dedup/data.yaml:val" \
  --epochs-det "${1:-30}" --epochs-cls "${2:-15}" --imgsz 416 \
  --work runs/build --out models
for d in "$S/byler-d6/data.yaml --split test" "$S/rune55-dedup/data.yaml --split val" "$S/skovy-webcam/data.yaml --split test"; do
  # shellcheck disable=SC2086
  .venv/bin/kosti eval --data $d --json
done
