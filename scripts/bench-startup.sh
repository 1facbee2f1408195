#!/usr/bin/env bash
# Measures `darman version`: wall time and peak RSS over N runs (default 50),
# printing the median and the 90th percentile of each. Usage:
#   scripts/bench-startup.sh [path/to/darman] [runs]
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
