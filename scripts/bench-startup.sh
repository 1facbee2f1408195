#!/usr/bin/env bash
# Measures `darman version`: wall time and peak RSS over N runs (default 50),
# printing the median and the 90th percentile of each. Usage:
#   scripts/bench-startup.sh [path/to/darman] [runs] [--lsp-idle SECONDS]
set -euo pipefail
bin=${1:-bin/darman}
runs=${2:-50}
[ -x "$bin" ] || { echo "no darman binary at $bin: run make build first" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs GNU time: apt-get install -y time" >&2; exit 1; }
pick() { sort -n | awk -v q="$1" '{a[NR]=$1} END {i=int(q*NR); if (i<1) i=1; print a[i]}'; }
# measure CMD...: fills walls (µs) and rss (KiB), one entry per run.
measure() {
  walls=() rss=()
  for _ in $(seq "$runs"); do
    start=$(date +%s%N)
    kb=$( { /usr/bin/time -f '%M' "$@" >/dev/null; } 2>&1 )
    end=$(date +%s%N)
    walls+=( $(( (end - start) / 1000 )) )
    rss+=( "$kb" )
  done
}
ms() { printf '%s\n' "${walls[@]}" | pick "$1" | awk '{printf "%.2f", $1/1000}'; }
# The same loop around /bin/true is the cost of measuring; it is subtracted.
measure /bin/true
base=$(ms 0.5)
measure "$bin" version
printf 'darman version, %d runs (measuring overhead %s ms subtracted)\n' "$runs" "$base"
printf '  wall  median %6.2f ms   p90 %6.2f ms\n' \
  "$(awk -v a="$(ms 0.5)" -v b="$base" 'BEGIN {print a-b}')" \
  "$(awk -v a="$(ms 0.9)" -v b="$base" 'BEGIN {print a-b}')"
printf '  RSS   median %6.2f MiB  p90 %6.2f MiB\n' \
  "$(printf '%s\n' "${rss[@]}" | pick 0.5 | awk '{print $1/1024}')" \
  "$(printf '%s\n' "${rss[@]}" | pick 0.9 | awk '{print $1/1024}')"

# With --lsp-idle SECONDS after the runs: darman lsp's resident memory while
# it sits idle, sampled from 1 s after initialized (the agent is up by
# then) to SECONDS, so the Go runtime's forced GC every two minutes is
# included. The model is configured but never called.
[ "${3:-}" = "--lsp-idle" ] || exit 0
secs=${4:-250}
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
ws=$home/project
mkdir -p "$ws/.git"
printf '{"model": "anthropic/claude-sonnet-4-5", "provider": {"anthropic": {"baseURL": "http://127.0.0.1:9", "apiKey": "sk-ant-test-0123456789"}}}' >"$ws/darman.json"
coproc LSP { cd "$ws" && HOME=$home XDG_CONFIG_HOME=$home/config XDG_DATA_HOME=$home/data exec "$bin" lsp 2>/dev/null; }
pid=$LSP_PID
send() { printf 'Content-Length: %d\r\n\r\n%s' "${#1}" "$1" >&"${LSP[1]}"; }
exec {from_lsp}<&"${LSP[0]}"
cat <&"$from_lsp" >/dev/null &
send '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"capabilities":{},"rootUri":"file://'"$ws"'"}}'
send '{"jsonrpc":"2.0","method":"initialized","params":{}}'
t0=$(date +%s)
printf 'darman lsp idle (the agent started, no prompt)\n'
for at in 1 30 125 "$secs"; do
  while [ $(( $(date +%s) - t0 )) -lt "$at" ]; do sleep 0.2; done
  awk -v at="$at" '/^VmRSS|^RssAnon|^RssFile/ {v[$1]=$2/1024}
    END {printf "  t+%4ds  RSS %6.1f MiB  anonymous %5.1f  file %5.1f\n", at, v["VmRSS:"], v["RssAnon:"], v["RssFile:"]}' "/proc/$pid/status"
done
send '{"jsonrpc":"2.0","id":2,"method":"shutdown"}'
send '{"jsonrpc":"2.0","method":"exit"}'
wait "$pid" 2>/dev/null || true
