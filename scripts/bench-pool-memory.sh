#!/usr/bin/env bash
# Measures the memory of darman's language-server pool with three servers
# running (issue 36): a real `darman mcp` over stdio asks the diagnostics
# of one Go, one TypeScript and one Python file, so gopls,
# typescript-language-server (with its tsserver) and pyright start; then
# darman's own RSS (and its anonymous part) and each server's process tree
# are read from /proc. Also prints each server's start cost: the first
# diagnostics call's time, a cold server loading the workspace, and when
# every server first answered on time (the workspace loaded).
#
# Usage:
#   scripts/bench-pool-memory.sh [DARMAN_BINARY] [TREE]
# DARMAN_BINARY defaults to a fresh build in /tmp; TREE, a directory the
# three files are added to (a generated tree from scripts/gentree.py; it
# is copied first, so it is not changed); without it, an empty workspace.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-}
if [ -z "$bin" ]; then
  bin=/tmp/darman-bench-pool
  (cd "$repo" && go build -o "$bin" ./cmd/darman)
fi
work=$(mktemp -d /tmp/darman-pool-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
ws=$work/ws
if [ -n "${2:-}" ]; then cp -r "$2" "$ws"; else mkdir -p "$ws"; fi
mkdir -p "$ws/.git" "$ws/bench"
printf 'module bench.example\n\ngo 1.22\n' > "$ws/go.mod"
printf 'package bench\n\nfunc Add(a, b int) int { return a + b }\n' > "$ws/bench/add.go"
printf '{"compilerOptions": {"strict": true, "noEmit": true}}\n' > "$ws/tsconfig.json"
printf 'export function add(a: number, b: number): number { return a + b; }\n' > "$ws/bench/add.ts"
printf '[project]\nname = "bench"\nversion = "0.1"\n' > "$ws/pyproject.toml"
printf 'def add(a: int, b: int) -> int:\n    return a + b\n' > "$ws/bench/add.py"
gopls=$(command -v gopls || echo "$(go env GOPATH)/bin/gopls")
export PATH="$repo/.cache/npm/node_modules/.bin:$(dirname "$gopls"):$PATH"
export HOME=$work/home XDG_CONFIG_HOME=$work/home/.config XDG_DATA_HOME=$work/home/.local/share XDG_CACHE_HOME=$work/home/.cache
mkdir -p "$HOME"
cd "$ws"
python3 - "$bin" <<'PY'
import json, os, subprocess, sys, time

proc = subprocess.Popen([sys.argv[1], "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
ids = iter(range(1, 1000))

def call(method, params):
    i = next(ids)
    proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
    proc.stdin.flush()
    while True:
        msg = json.loads(proc.stdout.readline())
        if msg.get("id") == i:
            if "error" in msg:
                sys.exit("%s: %s" % (method, msg["error"]))
            return msg["result"]

def status(pid):
    out = {}
    for line in open("/proc/%d/status" % pid):
        k, _, v = line.partition(":")
        if k in ("VmRSS", "RssAnon", "VmHWM"):
            out[k] = int(v.split()[0]) / 1024
    return out

def children():
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = open("/proc/%s/stat" % d).read()
                comm = open("/proc/%s/cmdline" % d).read().replace("\0", " ")
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            kids.setdefault(ppid, []).append((int(d), comm))
    return kids

def tree(pid, kids):
    out = [pid]
    for k, _ in kids.get(pid, []):
        out += tree(k, kids)
    return out

t0 = time.time()
call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}})
proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
proc.stdin.flush()
base = status(proc.pid)
print("darman mcp initialized in %.0f ms: RSS %.1f MiB (anonymous %.1f)" % ((time.time() - t0) * 1000, base["VmRSS"], base["RssAnon"]))
for f in ("bench/add.go", "bench/add.ts", "bench/add.py"):
    t = time.time()
    res = call("tools/call", {"name": "diagnostics", "arguments": {"paths": [f]}})
    text = "".join(c.get("text", "") for c in res.get("content", []))
    print("first diagnostics of %s: %.0f ms: %s" % (f, (time.time() - t) * 1000, " ".join(text.split())[:160]))
# A server still loading the tree answers late ("did not answer in time"):
# ask again until every file's answer is on time (at most 5 minutes),
# so the memory is read with the workspace loaded.
pending = ["bench/add.go", "bench/add.ts", "bench/add.py"]
while pending and time.time() - t0 < 300:
    res = call("tools/call", {"name": "diagnostics", "arguments": {"paths": pending}})
    text = "".join(c.get("text", "") for c in res.get("content", []))
    pending = [f for f in pending if f + ": the language server did not answer in time" in text]
print("every server answered on time %.1f s after the start%s" % (time.time() - t0, " (not: %s)" % pending if pending else ""))
time.sleep(2)
own = status(proc.pid)
kids = children()
print()
print("| process | RSS | anonymous | peak RSS |")
print("| --- | --- | --- | --- |")
print("| darman mcp, before any server | %.1f MiB | %.1f MiB | %.1f MiB |" % (base["VmRSS"], base["RssAnon"], base["VmHWM"]))
print("| darman mcp, three servers running | %.1f MiB | %.1f MiB | %.1f MiB |" % (own["VmRSS"], own["RssAnon"], own["VmHWM"]))
total = own["VmRSS"]
for pid, comm in kids.get(proc.pid, []):
    pids = tree(pid, kids)
    rss = sum(status(p)["VmRSS"] for p in pids)
    anon = sum(status(p)["RssAnon"] for p in pids)
    total += rss
    name = " ".join(os.path.basename(w) for w in comm.split()[:3])
    print("| %s (%d process%s) | %.1f MiB | %.1f MiB | |" % (name, len(pids), "es" if len(pids) > 1 else "", rss, anon))
    for p in pids:
        argv = open("/proc/%d/cmdline" % p).read().split("\0")
        print("|   %s | %.1f MiB | %.1f MiB | |" % (" ".join(os.path.basename(w) if i == 0 else w for i, w in enumerate(argv[:4]))[:90], status(p)["VmRSS"], status(p)["RssAnon"]))
print("| all | %.1f MiB | | |" % total)
proc.stdin.close()
proc.wait(timeout=30)
PY
