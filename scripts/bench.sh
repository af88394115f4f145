#!/usr/bin/env bash
# scripts/bench.sh: kandev measured against acpx (the Node ACP client) and
# against the floor (a minimal Go ACP client with no persistence), plus the
# scale figures within kandev, in one run, printed as one table (issue 7), and
# written with the date and the machine to figures.md in the work folder, the
# bench section of docs/figures.md.
#
#   scripts/bench.sh            # about 10 minutes on 2 cores, most of it go test -bench
#   BENCH_RUNS=9 scripts/bench.sh
#
# It installs what it needs: acpx from the npm registry into
# ${XDG_CACHE_HOME:-~/.cache}/kandev-bench/acpx (Node and npm from Debian's
# packages when missing and running as root). Every process is timed by
# scripts/benchtool (what hyperfine does, plus peak memory): one warm-up run,
# BENCH_RUNS timed runs (default 5), the median; then one more run that samples
# the process's peak RSS (VmHWM). Work files live under the cache folder, on
# the same disk as a real ~/.kandev, so fsync costs what it costs a user.
#
# Environment: BENCH_RUNS, ACPX_VERSION (default 0.19.1), KEEP_BENCH_WORK=1
# keeps the work folder, SKIP_GO_BENCH=1 skips the `go test -bench` part,
# BENCH_BASELINE=REV also times a warm prompt of kandev built at git revision
# REV against this build, alternately in one run (warmbench -baseline).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/kandev-bench
WORK=$CACHE/work
BIN=$WORK/bin
RES=$WORK/results
RUNS=${BENCH_RUNS:-5}
ACPX_VERSION=${ACPX_VERSION:-0.19.1}
export NO_COLOR=1
# Owners linger 300 s by default, none under CI: the figures below are of cold
# prompts, as before; the warm section passes --linger itself.
export CI=1

say() { printf '\n== %s\n' "$*" >&2; }
die() { printf 'bench: %s\n' "$*" >&2; exit 1; }
as_root() { [ "$(id -u)" = 0 ]; }

# unavailable NAME REASON records a figure that cannot be taken in this run.
unavailable() {
	printf '{"name":"%s","error":"%s"}\n' "$1" "$2" >"$RES/$1.json"
	printf '  %-38s not available: %s\n' "$1" "$2" >&2
}

# ---------------------------------------------------------------- tools
say "tools"
command -v go >/dev/null || die "go is not on PATH (kandev needs Go 1.26)"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	as_root || die "node and npm are needed for acpx; install them (apt-get install nodejs npm)"
	apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
fi
rm -rf "$WORK"
mkdir -p "$BIN" "$RES"
# Built as the release is (.goreleaser.yaml): static, no cgo (with cgo,
# os/user links libc and every start pays the dynamic loader), not stripped.
export CGO_ENABLED=0
(cd "$ROOT" && go build -trimpath -o "$BIN/kandev" . && go build -trimpath -o "$BIN/floor" ./scripts/floor && go build -o "$BIN/benchtool" ./scripts/benchtool && go build -trimpath -o "$BIN/hello" ./scripts/hello && go build -o "$BIN/warmbench" ./scripts/warmbench)
K=$BIN/kandev
T=$BIN/benchtool
AGENT="$K demo-agent"

# acpx: the pinned version, else the newest older one that runs on this Node.
ACPX_DIR=$CACHE/acpx
ACPX_CLI=$ACPX_DIR/node_modules/acpx/dist/cli.js
acpx_runs() { [ -f "$ACPX_CLI" ] && node "$ACPX_CLI" --version >/dev/null 2>&1; }
installed=$(node -p "require('$ACPX_DIR/node_modules/acpx/package.json').version" 2>/dev/null || true)
if [ "$installed" != "$ACPX_VERSION" ] || ! acpx_runs; then
	for v in "$ACPX_VERSION" $(npm view acpx versions --json 2>/dev/null | node -e '
		const want = process.argv[1]; const cmp = (a, b) => a.split(".").map(Number).reduce((r, x, i) => r || x - b.split(".").map(Number)[i], 0);
		let vs = JSON.parse(require("fs").readFileSync(0, "utf8")); if (!Array.isArray(vs)) vs = [vs];
		console.log(vs.filter(v => /^\d+\.\d+\.\d+$/.test(v) && cmp(v, want) < 0).reverse().slice(0, 4).join(" "));' "$ACPX_VERSION"); do
		rm -rf "$ACPX_DIR" && mkdir -p "$ACPX_DIR"
		echo "installing acpx@$v into $ACPX_DIR" >&2
		(cd "$ACPX_DIR" && npm install --no-audit --no-fund --loglevel=error "acpx@$v" >/dev/null 2>&1) || continue
		acpx_runs && break
	done
fi
acpx_runs || die "no acpx version runs on node $(node --version)"
ACPX_VER=$(node "$ACPX_CLI" --version)

{
	echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/{print $2}') GiB, $(uname -sr)"
	echo "disk:    $(df -T "$WORK" | awk 'NR==2{print $2" ("$1")"}') for the work folder $WORK"
	echo "tools:   $(go version | cut -d' ' -f3), node $(node --version), acpx $ACPX_VER, kandev $("$K" --version | awk '{print $2}') ($(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?')$(cd "$ROOT" && git diff --quiet 2>/dev/null || echo ', with uncommitted changes'))"
	echo "method:  median of $RUNS runs after 1 warm-up (benchtool measure); peak RSS = VmHWM of the kandev process"
} | tee "$WORK/machine.txt" >&2

measure() { # measure NAME [benchtool flags] -- CMD...
	local name=$1
	shift
	"$T" measure -out "$RES" -name "$name" -runs "$RUNS" "$@" || true
}

# ------------------------------------------------ kandev against acpx and the floor
# One working directory, one kandev home, one acpx home; the same agent
# command (kandev demo-agent) keeps its sessions in the same KANDEV_HOME.
say "kandev vs acpx vs floor (same agent command, same working directory)"
PEER=$WORK/peer
mkdir -p "$PEER/wd" "$PEER/acpx-home"
(
	export KANDEV_HOME=$PEER/home HOME=$PEER/acpx-home
	cd "$PEER/wd"
	"$K" start --linger 0 --title "bench peer session" "remember apple" >/dev/null 2>&1
	TOKEN=$("$K" status --latest --json | node -e 'console.log(JSON.parse(require("fs").readFileSync(0,"utf8")).session.resume_token)')
	[ -n "$TOKEN" ] || die "kandev start left no resume token"
	A=(node "$ACPX_CLI")
	"${A[@]}" --agent "$AGENT" sessions new >/dev/null 2>&1 || die "acpx could not create a session with $AGENT"
	"${A[@]}" --approve-all --ttl 0.01 --agent "$AGENT" prompt "remember apple" >/dev/null 2>&1 || die "acpx could not run a turn with $AGENT"

	# acpx keeps a queue owner process alive for --ttl seconds after a turn;
	# every acpx figure starts with none, as every kandev figure does.
	cat >"$PEER/acpx-idle.sh" <<-EOF
		for lock in "$HOME"/.acpx/queues/*.lock; do
			[ -f "\$lock" ] || continue
			pid=\$(sed -n 's/.*"pid": *\([0-9][0-9]*\).*/\1/p' "\$lock" | head -n 1)
			n=0
			while [ -n "\$pid" ] && kill -0 "\$pid" 2>/dev/null && [ \$n -lt 200 ]; do sleep 0.05; n=\$((n+1)); done
		done
	EOF
	IDLE="sh $PEER/acpx-idle.sh"
	# Start-up: the least a Go program takes, kandev answering from its
	# flags alone, and the agent launch through kandev's supervisor.
	measure kandev_version -peer go_hello -dir "$PEER/wd" -- "$K" --version ::: "$BIN/hello"
	"$T" supervise -out "$RES" -runs "$RUNS" -name supervise -kandev "$K" -- /bin/true || true
	measure kandev_list -dir "$PEER/wd" -- "$K" list
	measure acpx_list -dir "$PEER/wd" -prepare "$IDLE" -- "${A[@]}" --agent "$AGENT" sessions list
	measure acpx_list_local -dir "$PEER/wd" -prepare "$IDLE" -- "${A[@]}" --agent "$AGENT" sessions list --local
	measure kandev_status -dir "$PEER/wd" -- "$K" status --latest
	measure acpx_status -dir "$PEER/wd" -prepare "$IDLE" -- "${A[@]}" --agent "$AGENT" status
	# --linger 0: the floor starts and restores the agent every time, so
	# kandev does too (a warm owner is scripts/bench-warm.sh's figure).
	measure kandev_prompt -peer floor_prompt -dir "$PEER/wd" -- "$K" prompt --latest --linger 0 "/say hello" ::: "$BIN/floor" -session "$TOKEN" "/say hello" -- $AGENT
	measure acpx_prompt -dir "$PEER/wd" -prepare "$IDLE" -- "${A[@]}" --approve-all --ttl 0.01 --agent "$AGENT" prompt "/say hello"
	"$K" prompt --latest recall | grep -q apple || die "kandev's restored agent lost the conversation"
)

# The same prompt pair with the home on tmpfs: fsync costs nothing there, so
# the difference to the disk figures is the price of kandev's durability.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	SHM=$(mktemp -d /dev/shm/kandev-bench.XXXXXX)
	(
		export KANDEV_HOME=$SHM/home
		mkdir -p "$SHM/wd" && cd "$SHM/wd"
		"$K" start --linger 0 --title "bench tmpfs session" "remember apple" >/dev/null 2>&1
		TOKEN=$("$K" status --latest --json | node -e 'console.log(JSON.parse(require("fs").readFileSync(0,"utf8")).session.resume_token)')
		measure kandev_prompt_tmpfs -peer floor_prompt_tmpfs -dir "$SHM/wd" -- "$K" prompt --latest --linger 0 "/say hello" ::: "$BIN/floor" -session "$TOKEN" "/say hello" -- $AGENT
	)
	rm -rf "$SHM"
else
	unavailable kandev_prompt_tmpfs "no writable /dev/shm"
fi

# ------------------------------------------------ scale: many sessions
say "scale: list --resumable over 1,000 and 10,000 sessions"
mkdir -p "$WORK/wd"
for n in 1000 10000; do
	"$T" sessions -home "$WORK/s$n" -n "$n" -cwd "$WORK/wd"
done
KANDEV_HOME=$WORK/s1000 measure list_1k -dir "$WORK/wd" -- "$K" list --resumable
KANDEV_HOME=$WORK/s10000 measure list_10k -dir "$WORK/wd" -- "$K" list --resumable

# ------------------------------------------------ scale: long logs
say "scale: recap and a transcript page on 1,000 and 1,000,000 events"
LOGS=$WORK/logs
"$T" log -home "$LOGS" -id log-1k -events 1000 -cwd "$WORK/wd"
"$T" log -home "$LOGS" -id log-1m -events 1000000 -cwd "$WORK/wd"
echo "  log sizes: $(du -h "$LOGS/sessions/log-1k.jsonl" | cut -f1) and $(du -h "$LOGS/sessions/log-1m.jsonl" | cut -f1)" >&2
for cmd in recap transcript; do
	if "$K" "$cmd" --help >/dev/null 2>&1; then
		extra=()
		[ "$cmd" = recap ] && extra=(--limit 20)
		KANDEV_HOME=$LOGS measure "${cmd}_1k" -dir "$WORK/wd" -- "$K" "$cmd" log-1k "${extra[@]}"
		KANDEV_HOME=$LOGS measure "${cmd}_1m" -dir "$WORK/wd" -- "$K" "$cmd" log-1m "${extra[@]}"
	else
		unavailable "${cmd}_1k" "kandev $cmd does not exist in this build"
		unavailable "${cmd}_1m" "kandev $cmd does not exist in this build"
	fi
done

# ------------------------------------------------ scale: a 100,000-chunk turn and a 100,000-update load
say "scale: /bulk 100000 turn and a session/load replaying 100,000 updates"
BULK=$WORK/bulk
mkdir -p "$BULK/wd"
(
	export KANDEV_HOME=$BULK/home
	cd "$BULK/wd"
	mkdir -p "$KANDEV_HOME"
	printf '[agents.demo-noresume]\ncommand = ["%s", "demo-agent", "--no-resume"]\n' "$K" >"$KANDEV_HOME/config.toml"
	"$K" start --title "bulk turns" "remember apple" >"$BULK/start.out" 2>/dev/null
	BID=$(head -n 1 "$BULK/start.out")
	measure kandev_bulk -dir "$BULK/wd" -- "$K" prompt "$BID" "/bulk 100000"
	# The same stream from a subagent: recorded as the child's, tagged with its id.
	measure kandev_bulk_child -dir "$BULK/wd" -- "$K" prompt "$BID" "/subagent bulk /bulk 100000"
	"$T" emit -out "$RES" -name emit_bulk -runs "$RUNS" -cwd "$BULK/wd" -prompt "/bulk 100000" -- $AGENT || true

	# The whole turn is read (not cut by head), so the stored conversation holds all 100,000 chunks.
	"$K" start --agent demo-noresume --title "load replay" "/bulk 100000" >"$BULK/start.out" 2>/dev/null
	LID=$(head -n 1 "$BULK/start.out")
	LTOKEN=$("$K" status "$LID" --json | node -e 'console.log(JSON.parse(require("fs").readFileSync(0,"utf8")).session.resume_token)')
	measure kandev_load -dir "$BULK/wd" -- "$K" resume "$LID" --no-continue
	"$T" emit -out "$RES" -name emit_load -runs "$RUNS" -cwd "$BULK/wd" -load "$LTOKEN" -- $AGENT --no-resume || true
	# The connection held: every restore was a load, none was recorded again.
	"$K" events "$LID" --type agent_started --json | node -e '
		const evs = JSON.parse(require("fs").readFileSync(0, "utf8")).events;
		const bad = evs.slice(1).filter(e => e.restore !== "load");
		if (bad.length) { console.error("bench: a restore was not a load: " + JSON.stringify(bad[0])); process.exit(1); }
		console.error("  load check: " + (evs.length - 1) + " restores by session/load, replayed_updates " + JSON.stringify(evs[evs.length - 1].data && evs[evs.length - 1].data.replayed_updates));'
)

# ------------------------------------------------ warm against cold
# Then, on a pseudo-terminal: the [y/N] of an ask-mode request after it reached
# the owner, and Ctrl-C to exit with the turn cancelled, wherever the owner runs.
say "warm against cold, turn_ended -> exit (demo agent, --start-delay 1000; also with --ignore-eof), ask and Ctrl-C on a terminal"
WARM_ARGS=()
if [ -n "${BENCH_BASELINE:-}" ]; then
	BASE_SRC=$WORK/baseline-src
	mkdir -p "$BASE_SRC"
	(cd "$ROOT" && git archive "$BENCH_BASELINE" | tar -x -C "$BASE_SRC") && (cd "$BASE_SRC" && go build -trimpath -o "$BIN/kandev-baseline" .) &&
		WARM_ARGS=(-baseline "$BIN/kandev-baseline") || echo "  could not build kandev at $BENCH_BASELINE" >&2
fi
"$BIN/warmbench" -kandev "$K" -start-delay 1000 -runs "$RUNS" ${WARM_ARGS[@]+"${WARM_ARGS[@]}"} | tee "$WORK/warm.txt" >&2 || echo "  warmbench failed" >&2

# ------------------------------------------------ agents in containers
say "container runtime: cold start, warm prompt, reattach after SIGKILL (podman)"
BENCH_RUNS=$RUNS "$ROOT/scripts/bench-container.sh" "$K" | tee "$WORK/container.txt" >&2 || echo "  bench-container failed" >&2

# ------------------------------------------------ the resume path
# What `kandev resume` of an interrupted session opens before its agent starts
# (scripts/resume-path.sh says how it counts).
say "resume: paths opened and record reads before the agent starts"
if command -v strace >/dev/null && command -v python3 >/dev/null; then
	"$ROOT/scripts/resume-path.sh" "$K" >&2 || echo "  resume path: not measured" >&2
else
	echo "  resume path: not available (needs strace and python3)" >&2
fi

# ------------------------------------------------ go test -bench
if [ "${SKIP_GO_BENCH:-}" != 1 ]; then
	say "go test -bench (in-process: append, reverse read, assembly, replay bound, verdict, list)"
	(cd "$ROOT" && go test -run '^$' -bench . -benchmem -count "$RUNS" ./state ./verdict ./history ./acp ./commands) >"$WORK/gobench.txt" 2>&1 || echo "  go test -bench failed; see $WORK/gobench.txt" >&2
	# The owner's: the resume context from a long log, and a /bulk 100000 turn
	# in the parent against the same turn inside a subagent, alternating (one
	# turn of each per run: about 10 s a run on 2 cores).
	(cd "$ROOT" && go test -run '^$' -bench 'ResumeContextFromLog|BulkTurn' -benchmem -count "$RUNS" ./acp/owner) >>"$WORK/gobench.txt" 2>&1 || echo "  go test -bench ./acp/owner failed; see $WORK/gobench.txt" >&2
	# The board's idle CPU: the real binary in a tmux terminal, 10 s per run.
	(cd "$ROOT" && go test -run '^$' -bench BoardIdle -count 1 ./e2e) >>"$WORK/gobench.txt" 2>&1 || echo "  the board's idle bench failed (needs tmux); see $WORK/gobench.txt" >&2
	"$T" gobench -out "$RES" <"$WORK/gobench.txt" >"$WORK/gobench-summary.txt" || true
fi

# ------------------------------------------------ the table
say "results"
cat "$WORK/machine.txt"
echo
"$T" table "$RES" | tee "$WORK/table.md"
if [ -s "$WORK/gobench-summary.txt" ]; then
	echo
	echo "go test -bench (median of $RUNS):"
	cat "$WORK/gobench-summary.txt"
fi
if [ -s "$WORK/warm.txt" ]; then
	echo
	cat "$WORK/warm.txt"
fi
if [ -s "$WORK/container.txt" ]; then
	echo
	cat "$WORK/container.txt"
fi
# The bench section of docs/figures.md, dated, with the machine: copy it over
# that section when the figures change.
{
	echo "## \`scripts/bench.sh\`"
	echo
	echo "Run on $(date -u '+%Y-%m-%d %H:%M UTC') (\`BENCH_RUNS=$RUNS\`):"
	echo
	echo '```'
	cat "$WORK/machine.txt"
	echo '```'
	echo
	cat "$WORK/table.md"
	if [ -s "$WORK/gobench-summary.txt" ]; then
		echo
		echo "\`go test -bench\` (median of $RUNS):"
		echo
		echo '```'
		cat "$WORK/gobench-summary.txt"
		echo '```'
	fi
	if [ -s "$WORK/warm.txt" ]; then
		echo
		echo '```'
		cat "$WORK/warm.txt"
		echo '```'
	fi
	if [ -s "$WORK/container.txt" ]; then
		echo
		echo '```'
		cat "$WORK/container.txt"
		echo '```'
	fi
} >"$WORK/figures.md"
echo
echo "figures: $RES (one JSON file each); table: $WORK/table.md; for docs/figures.md: $WORK/figures.md"
[ "${KEEP_BENCH_WORK:-}" = 1 ] || rm -rf "$WORK"/s1000 "$WORK"/s10000 "$WORK"/logs "$WORK"/bulk
