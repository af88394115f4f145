#!/usr/bin/env bash
# Randomized crash matrix: builds kandev and the crashmatrix driver into a
# temp dir, then interrupts kandev at random points of random demo-agent turns
# with SIGKILL, SIGTERM (once or twice), SIGHUP or SIGINT, and SIGKILLs it
# inside import, prune, repair and stop; on the default path it signals the
# command that follows a turn or the detached owner running it; it resumes
# each session and checks the recovery rules for that signal. Two-machine
# trials (-trials two-machine) run random schedules of prompts on two homes
# sharing one remote (a path or git daemon), with kills of either owner, a
# frozen remote, different claim TTLs, warm and cold owners, and check that
# no two turns share a log position, no acknowledged turn is lost, and every
# divergence is refused by name and recovered by the commands it printed.
#
#   scripts/crash-matrix.sh                      # 120 runs, seed from the clock
#   scripts/crash-matrix.sh -n 620 -seed 20261130 -j 2   # the documented run
#   scripts/crash-matrix.sh -signals SIGTERM -trials turn -n 50
#   scripts/crash-matrix.sh -seed 42 -only 17 -v -keep   # replay one run
#   scripts/crash-matrix.sh -trials two-machine -n 200 -j 8  # two machines (go test runs these)
#
# Any other flag goes to the driver (see: go run ./scripts/crashmatrix -h).
# Exits non-zero if any invariant failed; failed runs' homes are kept.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(mktemp -d "${TMPDIR:-/tmp}/kandev-crash-matrix-bin.XXXXXX")"
trap 'rm -rf "$bin"' EXIT

cd "$root"
go build -o "$bin/kandev" .
go build -o "$bin/crashmatrix" ./scripts/crashmatrix

n=120
seed=0
args=()
while [ $# -gt 0 ]; do
	case "$1" in
	-n | --n) n="$2"; shift 2 ;;
	-seed | --seed) seed="$2"; shift 2 ;;
	*) args+=("$1"); shift ;;
	esac
done
if [ "$seed" = 0 ]; then
	seed=$(( $(date +%s%N) % 1000000000 ))
fi

"$bin/crashmatrix" -kandev "$bin/kandev" -n "$n" -seed "$seed" ${args[@]+"${args[@]}"}
