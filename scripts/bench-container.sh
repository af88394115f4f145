#!/usr/bin/env bash
# scripts/bench-container.sh [KANDEV]: the container runtime's figures
# (docs/containers.md) against the same steps run locally, on the demo agent:
# a cold start, a warm prompt, and the reattach after SIGKILL of every kandev
# process mid-turn (to the first byte of the resumed stream). Median of
# BENCH_RUNS (default 5). Needs podman able to run a container
# (.ci/podman-setup); scripts/bench.sh runs it. Prints a small text block.
set -euo pipefail
K=${1:-}
if [ -z "$K" ]; then
	K=$(mktemp -d)/kandev
	(cd "$(dirname "$0")/.." && go build -trimpath -o "$K" .)
fi
RUNS=${BENCH_RUNS:-5}
if ! podman run --rm --network=host --rootfs /:O true >/dev/null 2>&1; then
	echo "container figures: not available (podman cannot run a container here; .ci/podman-setup)"
	exit 0
fi
W=$(mktemp -d)
export KANDEV_HOME=$W/home NO_COLOR=1 CI=1
# Only this run's containers go at the end: those labelled with its home.
HASH=$(printf %s "$KANDEV_HOME" | sha256sum | cut -c1-16)
trap 'podman rm -f $(podman ps -aq --filter label=kandev.home=$HASH) >/dev/null 2>&1 || true; rm -rf "$W"' EXIT
mkdir -p "$W/p" && cd "$W/p"

ms() { local s=$(date +%s%N); "$@" >/dev/null 2>&1; echo $((($(date +%s%N) - s) / 1000000)); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
runs() { for _ in $(seq "$RUNS"); do "$@"; done | median; }
kill_host_kandevs() { for p in $(ps -eo pid,args | awk -v k="$K" '$2==k{print $1}'); do kill -9 "$p" 2>/dev/null || true; done; }

cold_local=$(runs ms "$K" start --linger 0 hello)
cold_ctr=$(runs ms "$K" start --runtime container --linger 0 hello)
L=$("$K" start --linger 60 hi 2>/dev/null | head -1)
C=$("$K" start --runtime container --linger 60 hi 2>/dev/null | head -1)
warm_local=$(runs ms "$K" prompt "$L" hello)
warm_ctr=$(runs ms "$K" prompt "$C" hello)

# Reattach: a turn sleeping in the agent, every kandev killed, then a prompt
# that reattaches; the time to its first line of output (the turn's end).
reattach_once() {
	("$K" prompt "$C" --linger 60 "/sleep 700
/say back" >/dev/null 2>&1 &)
	sleep 0.3
	kill_host_kandevs
	sleep 0.6 # the agent finishes the turn while no kandev runs
	local s=$(date +%s%N)
	"$K" prompt "$C" --linger 60 --json hello | head -1 >/dev/null
	echo $((($(date +%s%N) - s) / 1000000))
	sleep 0.2
}
reattach=$(for _ in $(seq "$RUNS"); do reattach_once; done | median)
"$K" close --all >/dev/null 2>&1 || true

echo "container figures (podman $(podman version --format '{{.Client.Version}}' 2>/dev/null), demo agent, median of $RUNS):"
echo "  cold start + first turn:  local ${cold_local} ms, container ${cold_ctr} ms (+$((cold_ctr - cold_local)) ms)"
echo "  warm prompt:              local ${warm_local} ms, container ${warm_ctr} ms ($(awk -v a="$warm_ctr" -v b="$warm_local" 'BEGIN{printf "%.2f", a/b}')x)"
echo "  reattach after SIGKILL:   ${reattach} ms to the first byte of the resumed stream"
