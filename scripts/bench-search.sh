#!/usr/bin/env bash
# scripts/bench-search.sh: kandev search over about 1 GB of logs (10,000
# sessions of 450 events each) against grep -rF of the same word over the same
# files, and kandev's peak memory. The home is built once and kept in
# $SEARCH_BENCH_DIR (default /tmp/kandev-bench-search); both commands read it
# from the page cache (it is read once before timing). Each command runs
# BENCH_RUNS times (default 5), alternating; the medians of wall time are
# compared (kandev reads several logs at once, grep one: CPU time, user plus
# system, is printed too).
#
#   scripts/bench-search.sh
#   BENCH_RUNS=9 SEARCH_BENCH_DIR=/var/tmp/kb scripts/bench-search.sh
#
# Targets: kandev at most 1.5x grep's wall time, at most 64 MiB peak RSS.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${SEARCH_BENCH_DIR:-/tmp/kandev-bench-search}
RUNS=${BENCH_RUNS:-5}
SESSIONS=10000
EVENTS=450
WORD=quuxlexer # in one prompt of every 50th session: 200 matching lines
H=$DIR/home
export NO_COLOR=1

command -v /usr/bin/time >/dev/null || { echo "bench-search: /usr/bin/time is needed (apt-get install time)" >&2; exit 1; }
mkdir -p "$DIR/bin" "$DIR/wd"
(cd "$ROOT" && go build -o "$DIR/bin/kandev" . && go build -o "$DIR/bin/benchtool" ./scripts/benchtool)
K=$DIR/bin/kandev

stamp=$H/.complete-$SESSIONS-$EVENTS-$WORD
if [ ! -e "$stamp" ]; then
	echo "building the home ($SESSIONS sessions, about 1 GB) in $H" >&2
	rm -rf "$H"
	"$DIR/bin/benchtool" sessions -home "$H" -n "$SESSIONS" -events "$EVENTS" -cwd "$DIR/wd" -word "$WORD"
	touch "$stamp"
fi
echo "logs: $(du -sh --apparent-size "$H/sessions" | cut -f1) in $(find "$H/sessions" -name '*.jsonl' | wc -l) files" >&2
find "$H/sessions" -name '*.jsonl' -exec cat {} + >/dev/null # into the page cache

# run CMD... prints "WALL_MS MAXRSS_KB LINES CPU_MS" for one run (CPU: user + system).
run() {
	local t0 t1 stats lines
	t0=$(date +%s%N)
	lines=$(/usr/bin/time -f '%M %U %S' -o "$DIR/rss" "$@" | wc -l)
	t1=$(date +%s%N)
	stats=$(tail -n1 "$DIR/rss")
	echo "$(( (t1 - t0) / 1000000 )) ${stats%% *} $lines $(echo "$stats" | awk '{printf "%d", ($2 + $3) * 1000}')"
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

: >"$DIR/grep.txt"
: >"$DIR/kandev.txt"
for _ in $(seq "$RUNS"); do
	run grep -rF "$WORD" "$H/sessions" >>"$DIR/grep.txt"
	run "$K" --home "$H" search "$WORD" --limit 0 >>"$DIR/kandev.txt"
done
g=$(cut -d' ' -f1 "$DIR/grep.txt" | median)
k=$(cut -d' ' -f1 "$DIR/kandev.txt" | median)
rss=$(cut -d' ' -f2 "$DIR/kandev.txt" | sort -n | tail -n1)
gcpu=$(cut -d' ' -f4 "$DIR/grep.txt" | median)
kcpu=$(cut -d' ' -f4 "$DIR/kandev.txt" | median)
glines=$(head -n1 "$DIR/grep.txt" | cut -d' ' -f3)
hits=$("$K" --home "$H" --json search "$WORD" --limit 0 | grep -o '"session_id"' | wc -l)
echo "grep -rF $WORD:          median ${g} ms wall, ${gcpu} ms CPU ($glines lines)"
echo "kandev search $WORD:     median ${k} ms wall, ${kcpu} ms CPU ($hits results), peak RSS $((rss / 1024)) MiB"
awk -v k="$k" -v g="$g" -v r="$rss" 'BEGIN {
	ratio = k / g
	printf "ratio kandev/grep:      %.2fx (target <= 1.5x): %s\n", ratio, (ratio <= 1.5 ? "ok" : "MISSED")
	printf "peak memory:            %.1f MiB (target <= 64 MiB): %s\n", r / 1024, (r <= 65536 ? "ok" : "MISSED")
}'
