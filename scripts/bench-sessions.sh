#!/usr/bin/env bash
# Measures `darman sessions list` against a store of many sessions (issue
# 36: 10,000 sessions, the list within 50 ms) and the store's disk use per
# session. The store is written once by the store's test binary (role
# "sessions": a session, a prompt message and its part each), then darman
# lists the 100 most recent (the default), 20, and all of them, N runs
# each (default 20), printing the medians.
# Usage: scripts/bench-sessions.sh [path/to/darman] [sessions] [runs]
set -euo pipefail
bin=$(realpath "${1:-bin/darman}")
n=${2:-10000}
runs=${3:-20}
[ -x "$bin" ] || { echo "no darman binary at $bin: run make build first" >&2; exit 1; }
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
(cd "$repo" && go test -c -o "$work/store.test" ./agent/store)
t0=$(now)
DARMAN_STORE_TEST_CHILD=sessions "$work/store.test" -test.run='^$' "$work/data" "$n"
echo "wrote $n sessions in $(( ($(now) - t0) / 1000000 )) ms; on disk: store $(du -sh "$work/data/store" | cut -f1), journal $(du -sh "$work/data/journal" | cut -f1)"
mkdir -p "$work/home" "$work/empty"
list() { local data=$1; shift; (cd "$work/empty" && HOME=$work/home XDG_CONFIG_HOME=$work/home/config DARMAN_DATA_DIR=$data "$bin" sessions list "$@" >/dev/null 2>&1); }
list "$work/data"; list "$work/none" # warm the page cache
for args in "" "-n 20" "-n 0"; do
  : >"$work/t"; : >"$work/e"
  for _ in $(seq 1 "$runs"); do
    t0=$(now); list "$work/data" $args; echo $(( ($(now) - t0) / 1000 )) >>"$work/t"
    t0=$(now); list "$work/none" $args; echo $(( ($(now) - t0) / 1000 )) >>"$work/e"
  done
  awk -v a="sessions list ${args:-(default, 100)}" -v m="$(median <"$work/t")" -v e="$(median <"$work/e")" \
    'BEGIN {printf "%-32s %d sessions: median %7.1f ms   empty store: %7.1f ms\n", a, '"$n"', m/1000, e/1000}'
done
