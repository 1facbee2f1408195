#!/usr/bin/env bash
# Measures darman's start: `darman version` (wall time and peak RSS) and
# `darman lsp` from its start to the answer to initialize, over N runs
# (default 50), printing the median and the 90th percentile of each.
# Usage:
#   scripts/bench-startup.sh [path/to/darman] [runs] [--against OTHER] [--lsp-idle SECONDS]
#   scripts/bench-startup.sh --build REV OUT
# --against OTHER measures a second binary (an older build) in the same
# loop, one run of each in turn (each going first every other time), so
# that both see the same machine load.
# --build REV OUT writes to OUT the release build of a commit, as `make
# release` makes it (static, stripped, -trimpath, version and commit
# stamped), from `git archive REV`: compare two of these, e.g.
#   scripts/bench-startup.sh --build main /tmp/old && scripts/bench-startup.sh --build HEAD /tmp/new
#   scripts/bench-startup.sh /tmp/new 40 --against /tmp/old
set -euo pipefail
if [ "${1:-}" = --build ]; then
  [ $# -eq 3 ] || { echo "usage: $0 --build REV OUT" >&2; exit 2; }
  commit=$(git rev-parse --verify "$2^{commit}")
  version=$(git describe --tags --always "$commit")
  out=$(realpath -m "$3")
  src=$(mktemp -d)
  trap 'rm -rf "$src"' EXIT
  git archive "$commit" | tar -x -C "$src"
  (cd "$src" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$version -X main.commit=$commit" -o "$out" ./cmd/darman)
  echo "$out: $(stat -c %s "$out") bytes, $2 ($commit)"
  exit 0
fi
bin=${1:-bin/darman}
runs=${2:-50}
shift $(( $# < 2 ? $# : 2 ))
other="" idle=""
while [ $# -gt 0 ]; do
  case $1 in
    --against) other=$2; shift 2 ;;
    --lsp-idle) idle=${2:-250}; shift $(( $# < 2 ? 1 : 2 )) ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
for b in "$bin" $other; do
  [ -x "$b" ] || { echo "no darman binary at $b: run make build first" >&2; exit 1; }
done
# lsp starts in a workspace of its own: a relative path would not be found.
bin=$(realpath "$bin")
[ -z "$other" ] || other=$(realpath "$other")
[ -x /usr/bin/time ] || { echo "needs GNU time: apt-get install -y time" >&2; exit 1; }
pick() { sort -n | awk -v q="$1" '{a[NR]=$1} END {i=int(q*NR); if (i<1) i=1; print a[i]}'; }
now() { date +%s%N; }

home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
ws=$home/project
mkdir -p "$ws/.git"
printf '{"model": "anthropic/claude-sonnet-4-5", "provider": {"anthropic": {"baseURL": "http://127.0.0.1:9", "apiKey": "sk-ant-test-0123456789"}}}' >"$ws/darman.json"
send() { printf 'Content-Length: %d\r\n\r\n%s' "${#2}" "$2" >&"$1"; }
initialize='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"capabilities":{},"workspaceFolders":[{"uri":"file://'"$ws"'","name":"p"}]}}'

# One start of darman lsp, to its answer to initialize, in µs, and the
# processor time its threads had used by then (from
# /proc/PID/task/*/schedstat), in µs: a figure that load moves much less
# than the wall time. The answer is written at once, so its first line's
# arrival is the answer's.
lsp_once() {
  local t0 t1 line cpu
  t0=$(now)
  coproc LSPI { cd "$ws" && HOME=$home XDG_CONFIG_HOME=$home/config XDG_DATA_HOME=$home/data exec "$1" lsp --stdio 2>/dev/null; }
  local pid=${LSPI_PID:-} out=${LSPI[0]:-} in=${LSPI[1]:-}
  [ -n "$out" ] || { echo "$1 lsp exited at once" >&2; exit 1; }
  send "$in" "$initialize"
  IFS= read -r line <&"$out"
  t1=$(now)
  cpu=$(cat /proc/"$pid"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {print int(s / 1000)}')
  send "$in" '{"jsonrpc":"2.0","id":2,"method":"shutdown"}'
  send "$in" '{"jsonrpc":"2.0","method":"exit"}'
  cat <&"$out" >/dev/null
  wait $pid 2>/dev/null || true
  case $line in Content-Length:*) ;; *) echo "darman lsp did not answer initialize: $line" >&2; exit 1 ;; esac
  echo "$(( (t1 - t0) / 1000 )) ${cpu:-0}"
}

# The cost of measuring: the same loops around /bin/true (a process start
# and, for lsp, a coprocess), subtracted from every figure.
declare -A walls rss inits cpus
base_walls=() base_lsp=()
for _ in $(seq "$runs"); do
  start=$(now); /usr/bin/time -f '%M' /bin/true 2>/dev/null; end=$(now)
  base_walls+=( $(( (end - start) / 1000 )) )
  start=$(now)
  coproc TRUE { exec /bin/true; }
  # bash unsets TRUE_PID once it has reaped the process.
  wait ${TRUE_PID:-} 2>/dev/null || true
  end=$(now)
  base_lsp+=( $(( (end - start) / 1000 )) )
done
med() { printf '%s\n' "$@" | pick 0.5; }
base=$(med "${base_walls[@]}")
lbase=$(med "${base_lsp[@]}")

# The binaries take turns going first: a start right after another
# darman's exit (its store's writes still going to disk) is slower.
for i in $(seq "$runs"); do
  order="$bin $other"
  if [ -n "$other" ] && [ $(( i % 2 )) -eq 0 ]; then order="$other $bin"; fi
  for b in $order; do
    start=$(now)
    kb=$( { /usr/bin/time -f '%M' "$b" version >/dev/null; } 2>&1 )
    end=$(now)
    walls[$b]+="$(( (end - start) / 1000 )) "
    rss[$b]+="$kb "
    read -r wall cpu < <(lsp_once "$b")
    inits[$b]+="$wall "
    cpus[$b]+="$cpu "
  done
done
ms() { tr ' ' '\n' | grep . | pick "$1" | awk -v b="$2" '{printf "%.2f", ($1-b)/1000}'; }
for b in "$bin" $other; do
  printf '%s, %d runs (measuring overhead %.2f ms, %.2f ms for lsp, subtracted)\n' "$b" "$runs" \
    "$(awk -v a="$base" 'BEGIN {print a/1000}')" "$(awk -v a="$lbase" 'BEGIN {print a/1000}')"
  printf '  version     median %6.2f ms   p90 %6.2f ms\n' \
    "$(ms 0.5 "$base" <<<"${walls[$b]}")" "$(ms 0.9 "$base" <<<"${walls[$b]}")"
  printf '  version RSS median %6.2f MiB  p90 %6.2f MiB\n' \
    "$(tr ' ' '\n' <<<"${rss[$b]}" | grep . | pick 0.5 | awk '{print $1/1024}')" \
    "$(tr ' ' '\n' <<<"${rss[$b]}" | grep . | pick 0.9 | awk '{print $1/1024}')"
  printf '  initialize  median %6.2f ms   p90 %6.2f ms\n' \
    "$(ms 0.5 "$lbase" <<<"${inits[$b]}")" "$(ms 0.9 "$lbase" <<<"${inits[$b]}")"
  printf '  initialize  CPU time median %6.2f ms   p90 %6.2f ms (all threads, at the answer)\n' \
    "$(ms 0.5 0 <<<"${cpus[$b]}")" "$(ms 0.9 0 <<<"${cpus[$b]}")"
done

# With --lsp-idle SECONDS after the runs: darman lsp's resident memory while
# it sits idle, sampled from 1 s after initialized (the agent is up by
# then) to SECONDS, so the Go runtime's forced GC every two minutes is
# included. The model is configured but never called.
[ -n "$idle" ] || exit 0
coproc LSP { cd "$ws" && HOME=$home XDG_CONFIG_HOME=$home/config XDG_DATA_HOME=$home/data exec "$bin" lsp 2>/dev/null; }
pid=$LSP_PID
exec {to_lsp}>&"${LSP[1]}"
exec {from_lsp}<&"${LSP[0]}"
cat <&"$from_lsp" >/dev/null &
send "$to_lsp" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"capabilities":{},"rootUri":"file://'"$ws"'"}}'
send "$to_lsp" '{"jsonrpc":"2.0","method":"initialized","params":{}}'
t0=$(date +%s)
printf 'darman lsp idle (the agent started, no prompt)\n'
for at in 1 30 125 "$idle"; do
  while [ $(( $(date +%s) - t0 )) -lt "$at" ]; do sleep 0.2; done
  awk -v at="$at" '/^VmRSS|^RssAnon|^RssFile/ {v[$1]=$2/1024}
    END {printf "  t+%4ds  RSS %6.1f MiB  anonymous %5.1f  file %5.1f\n", at, v["VmRSS:"], v["RssAnon:"], v["RssFile:"]}' "/proc/$pid/status"
done
send "$to_lsp" '{"jsonrpc":"2.0","id":2,"method":"shutdown"}'
send "$to_lsp" '{"jsonrpc":"2.0","method":"exit"}'
wait "$pid" 2>/dev/null || true
