#!/usr/bin/env bash
# scripts/resume-path.sh [KANDEV]: what `kandev resume` touches before the
# agent starts, on the default settings (a detached owner), for a demo
# session whose turn was interrupted by SIGTERM.
#
# Counted with strace -f: the distinct paths the kandev processes (the
# command and the __serve owner it starts) open, with any result, and the
# opens of the session's record (sessions/ID.json), up to the exec of the
# agent (the first exec whose arguments end in demo-agent: its supervisor).
# Needs strace and python3.
set -euo pipefail
K=${1:-kandev}
command -v strace >/dev/null || { echo "resume-path: strace is not installed" >&2; exit 1; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export KANDEV_HOME=$W/home
unset CI
mkdir "$W/repo" && cd "$W/repo" && git init -q && git -c user.name=b -c user.email=b@b commit -q --allow-empty -m init
"$K" start --agent demo --linger 0 $'/say before\n/sleep 60000\n/say after' >"$W/start.out" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q before "$W/start.out" && break; sleep 0.1; done
kill -TERM $pid
wait $pid || true
id=$("$K" list --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["sessions"][0]["id"])')
strace -f -e trace=openat,open,execve,clone,clone3 -o "$W/trace" "$K" resume "$id" >/dev/null 2>&1 </dev/null &
st=$!
# The owner lingers: once the agent has started, close it, and strace ends with it.
for _ in $(seq 300); do grep -q 'demo-agent"\]' "$W/trace" 2>/dev/null && break; sleep 0.1; done
sleep 1
"$K" close "$id" >/dev/null 2>&1 || true
wait $st || true
python3 - "$W/trace" "$id" "$KANDEV_HOME" <<'EOF'
import re, sys
trace, sid, home = sys.argv[1], sys.argv[2], sys.argv[3]
proc, name, paths, record, pending = {}, {}, {}, {}, {}
for line in open(trace):
    m = re.match(r'(\d+)\s+(.*)', line)
    if not m:
        continue
    tid, rest = int(m.group(1)), m.group(2)
    if not proc:
        proc[tid], name[tid] = tid, 'command'
    p = proc.setdefault(tid, tid)
    if 'execve(' in rest and '"demo-agent"]' in rest:
        break
    if 'execve(' in rest and '__serve' in rest:
        proc[tid], name[tid], p = tid, '__serve', tid
    # strace splits a call another thread interrupts: <unfinished ...>, then
    # <... clone resumed>; join them, or the child's process is unknown.
    if re.match(r'clone3?\(', rest) and rest.endswith('<unfinished ...>'):
        pending[tid] = rest[:-len('<unfinished ...>')]
        continue
    r = re.match(r'<\.\.\. clone3? resumed>(.*)', rest)
    if r and tid in pending:
        rest = pending.pop(tid) + r.group(1)
    c = re.match(r'clone3?\((.*)\)\s+=\s+(\d+)', rest)
    if c:
        child = int(c.group(2))
        proc[child] = p if 'CLONE_THREAD' in c.group(1) else child
        continue
    o = re.search(r'open(?:at)?\([^"]*"([^"]*)"', rest)
    if o:
        n = name.get(p, 'child %d' % p)
        paths.setdefault(n, set()).add(o.group(1))
        # The record itself, not the pulled copy under sync/sessions/.
        if o.group(1) == '%s/sessions/%s.json' % (home, sid):
            record[n] = record.get(n, 0) + 1
print('resume before the agent starts: %d distinct paths opened' % len(set().union(*paths.values())))
for n in paths:
    print('  %-8s %3d paths, the record opened %d times' % (n, len(paths[n]), record.get(n, 0)))
EOF
