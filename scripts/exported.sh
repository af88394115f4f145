#!/usr/bin/env bash
# scripts/exported.sh: exported funcs, methods and types and product lines
# (tests excluded) per package; exits 1 when a package has more than 100.
#   scripts/exported.sh            # every package in the module
#   scripts/exported.sh state acp  # only these directories
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./scripts/exported "$@"
