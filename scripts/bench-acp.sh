#!/usr/bin/env bash
# Measures `darman acp` as an ACP client sees it start: the wall time from
# starting the process to reading its answer to initialize, and its RSS
# once idle after that answer, over N runs (default 50), printing the
# median and the 90th percentile of each. Another agent's command can be
# measured the same way for scale (e.g. `opencode acp`). Usage:
#   scripts/bench-acp.sh [path/to/darman] [runs] [-- other agent command...]
set -euo pipefail
bin=${1:-bin/darman}
runs=${2:-50}
shift $(( $# < 2 ? $# : 2 ))
[ "${1:-}" = "--" ] && shift
[ -x "$bin" ] || { echo "no darman binary at $bin: run make build first" >&2; exit 1; }
[ -r /proc/self/status ] || { echo "needs /proc to read RSS (Linux)" >&2; exit 1; }

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true}}}'
# A fresh home, so no user configuration or store is read.
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
pick() { sort -n | awk -v q="$1" '{a[NR]=$1} END {i=int(q*NR); if (i<1) i=1; print a[i]}'; }

# measure CMD...: fills walls (µs), rss and anon (KiB; anon is RssAnon, the
# process's own memory, the rest being pages of its binary and libraries),
# one entry per run: start
# the command, send initialize, read one line back, wait 100 ms, read VmRSS,
# close its stdin and wait for it to end.
measure() {
  walls=() rss=() anon=()
  for _ in $(seq "$runs"); do
    start=$(date +%s%N)
    coproc AGENT { cd "$home" && HOME=$home XDG_CONFIG_HOME=$home/.config XDG_DATA_HOME=$home/.local/share exec "$@" 2>/dev/null; }
    pid=$AGENT_PID
    printf '%s\n' "$init" >&"${AGENT[1]}"
    IFS= read -r answer <&"${AGENT[0]}"
    end=$(date +%s%N)
    case $answer in
      *'"id":1'*) ;;
      *) echo "unexpected answer: $answer" >&2; exit 1 ;;
    esac
    sleep 0.1
    kb=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
    an=$(awk '/^RssAnon/ {print $2}' "/proc/$pid/status")
    eval "exec ${AGENT[1]}>&-"
    wait "$pid" || true
    walls+=( $(( (end - start) / 1000 )) )
    rss+=( "$kb" )
    anon+=( "$an" )
  done
}
ms() { printf '%s\n' "${walls[@]}" | pick "$1" | awk '{printf "%.2f", $1/1000}'; }
report() {
  printf '%s, %d runs (measuring overhead %s ms subtracted)\n' "$1" "$runs" "$base"
  printf '  start → initialize answer  median %7.2f ms   p90 %7.2f ms\n' \
    "$(awk -v a="$(ms 0.5)" -v b="$base" 'BEGIN {print a-b}')" \
    "$(awk -v a="$(ms 0.9)" -v b="$base" 'BEGIN {print a-b}')"
  printf '  idle RSS                   median %7.2f MiB  p90 %7.2f MiB\n' \
    "$(printf '%s\n' "${rss[@]}" | pick 0.5 | awk '{print $1/1024}')" \
    "$(printf '%s\n' "${rss[@]}" | pick 0.9 | awk '{print $1/1024}')"
  printf '    of which anonymous       median %7.2f MiB\n' \
    "$(printf '%s\n' "${anon[@]}" | pick 0.5 | awk '{print $1/1024}')"
}

# cat answers at once by echoing the request: the cost of measuring.
measure cat
base=$(ms 0.5)
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
measure "$bin" acp
report "darman acp"
if [ $# -gt 0 ]; then
  measure "$@"
  report "$*"
fi
