#!/usr/bin/env bash
# scripts/bench-warm.sh: a prompt to a warm (lingering) owner against a cold
# one, on the demo agent made slow to start (--start-delay, default 1000 ms).
#
#   scripts/bench-warm.sh              # about 15 s
#   START_DELAY=1500 RUNS=9 scripts/bench-warm.sh
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$(mktemp -d)
trap 'rm -rf "$BIN"' EXIT
(cd "$ROOT" && go build -o "$BIN/kandev" . && go build -o "$BIN/warmbench" ./scripts/warmbench)
"$BIN/warmbench" -kandev "$BIN/kandev" -start-delay "${START_DELAY:-1000}" -runs "${RUNS:-5}"
