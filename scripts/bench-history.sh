#!/usr/bin/env bash
# Measures whether a start of darman grows with its data directory's
# history (issue 39): a one-answer `darman run` turn in an empty workspace
# and `darman lsp` from its start to the answer to initialize, each with a
# fresh data directory and with a big one, one run of each in turn, over N
# runs (default 30), and `darman sessions list` (its default page and a
# page of one; and the default page of a directory of 100 sessions, the
# same 100 rows as the big directory's), printing the medians, their ratio, and the median of
# the pair-by-pair ratios (run i with the big directory over run i with the
# fresh one).
#
# The big data directory is generated once (and kept with --keep DIR):
# 1,000 sessions, and the checkpoints of a 100,000-file repository after
# two turns of 12 edits each, all made by darman itself against the
# scripted model.
# Usage:
#   scripts/bench-history.sh [path/to/darman] [runs] [--keep DIR]
set -euo pipefail
bin=$(realpath "${1:-bin/darman}")
runs=${2:-30}
shift $(( $# < 2 ? $# : 2 ))
keep=""
while [ $# -gt 0 ]; do
  case $1 in
    --keep) keep=$(realpath -m "$2"); shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "no darman binary at $bin: run make build first" >&2; exit 1; }
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
model_pid=""
cleanup() { [ -z "$model_pid" ] || kill "$model_pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# The scripted model: the two "edit" conversations write 12 new files
# each, one call a step, then answer; every other prompt gets one answer.
edits() { # edits NAME: 12 steps writing pkg1..12/NAME
  local i out=""
  for i in $(seq 1 12); do
    out+='{"toolCalls":[{"name":"write","arguments":{"path":"pkg'$i'/'$1'","content":"edit '$i'\n"}}]},'
  done
  echo "$out"
}
cat >"$work/script.json" <<JSON
{"conversations": [{"match": "again", "steps": [$(edits second.txt){"text": "edited"}]},
                   {"match": "edit", "steps": [$(edits first.txt){"text": "edited"}]}],
 "steps": [{"text": "hi"}]}
JSON
(cd "$repo" && go build -o "$work/scripted-model" ./cmd/scripted-model)
coproc MODEL { exec "$work/scripted-model" -stdin-eof-exit "$work/script.json"; }
model_pid=$MODEL_PID
read -r url <&"${MODEL[0]}"
config='{"model": "anthropic/claude-sonnet-4-5", "provider": {"anthropic": {"baseURL": "'"$url"'", "apiKey": "sk-ant-test-0123456789"}}, "permission": {"edit": "allow"}}'

home=$work/home
mkdir -p "$home" "$work/empty"
darman() { # darman DATA_DIR DIR ARGS...: darman in DIR with its own home
  local data=$1 dir=$2; shift 2
  (cd "$dir" && HOME=$home XDG_CONFIG_HOME=$home/config DARMAN_DATA_DIR=$data DARMAN_CONFIG_CONTENT=$config "$bin" "$@")
}

big=${keep:-$work/big}
if [ ! -e "$big/.complete" ]; then
  echo "generating $big ..." >&2
  t0=$(now)
  mkdir -p "$big"
  big_repo=$work/bigrepo
  python3 - "$big_repo" <<'PY'
import os, sys
root = sys.argv[1]
for d in range(1000):
    p = os.path.join(root, "pkg%d" % d, "sub%d" % (d % 7))
    os.makedirs(p, exist_ok=True)
    for f in range(100):
        with open(os.path.join(p, "f%d.go" % f), "w") as fh:
            fh.write("package p\n\n// file %d of %d\nfunc F%d() int { return %d }\n" % (f, d, f, d * f))
PY
  git -C "$big_repo" init -q
  darman "$big" "$big_repo" run "edit twelve files" >/dev/null
  darman "$big" "$big_repo" run "edit twelve files again" >/dev/null
  for i in $(seq 1 1000); do echo "$i"; done | xargs -P 2 -I{} bash -c 'cd "$0" && HOME=$1 XDG_CONFIG_HOME=$1/config DARMAN_DATA_DIR=$2 DARMAN_CONFIG_CONTENT=$3 "$4" run "session {}" >/dev/null' "$work/empty" "$home" "$big" "$config" "$bin"
  touch "$big/.complete"
  echo "generated in $(( ($(now) - t0) / 1000000000 )) s: $(du -sh "$big" | cut -f1)" >&2
fi

send() { printf 'Content-Length: %d\r\n\r\n%s' "${#2}" "$2" >&"$1"; }
initialize='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"capabilities":{},"workspaceFolders":[{"uri":"file://'"$work/empty"'","name":"p"}]}}'
lsp_once() { # lsp_once DATA_DIR: µs from start to the answer to initialize
  local t0 t1 line
  t0=$(now)
  coproc LSPI { cd "$work/empty" && HOME=$home XDG_CONFIG_HOME=$home/config DARMAN_DATA_DIR=$1 DARMAN_CONFIG_CONTENT=$config exec "$bin" lsp --stdio 2>/dev/null; }
  local pid=$LSPI_PID out=${LSPI[0]} in=${LSPI[1]}
  send "$in" "$initialize"
  IFS= read -r line <&"$out"
  t1=$(now)
  send "$in" '{"jsonrpc":"2.0","id":2,"method":"shutdown"}'
  send "$in" '{"jsonrpc":"2.0","method":"exit"}'
  cat <&"$out" >/dev/null
  wait "$pid" 2>/dev/null || true
  case $line in Content-Length:*) ;; *) echo "darman lsp did not answer initialize: $line" >&2; exit 1 ;; esac
  echo $(( (t1 - t0) / 1000 ))
}
run_once() { # run_once DATA_DIR: µs of a one-answer darman run
  local t0
  t0=$(now)
  darman "$1" "$work/empty" run --format json "hi" >/dev/null
  echo $(( ($(now) - t0) / 1000 ))
}

list_once() { # list_once DATA_DIR [ARGS]: µs of darman sessions list
  local t0 dir=$1
  shift
  t0=$(now)
  darman "$dir" "$work/empty" sessions list "$@" >/dev/null
  echo $(( ($(now) - t0) / 1000 ))
}

fresh=$work/fresh
# A data directory of 100 one-answer sessions and nothing else: its list
# prints the same 100 rows as the big directory's default page.
page=$work/page
for i in $(seq 1 100); do run_once "$page" >/dev/null; done
: >"$work/run.fresh"; : >"$work/run.big"; : >"$work/lsp.fresh"; : >"$work/lsp.big"; : >"$work/list.fresh"; : >"$work/list.big"; : >"$work/list1.fresh"; : >"$work/list1.big"; : >"$work/list.page"
run_once "$fresh" >/dev/null; run_once "$big" >/dev/null # warm the page cache
for i in $(seq 1 "$runs"); do
  if (( i % 2 )); then order="fresh big"; else order="big fresh"; fi
  for which in $order; do
    dir=$fresh; [ "$which" = big ] && dir=$big
    run_once "$dir" >>"$work/run.$which"
    lsp_once "$dir" >>"$work/lsp.$which"
    list_once "$dir" >>"$work/list.$which"
    list_once "$dir" -n 1 >>"$work/list1.$which"
  done
  list_once "$page" >>"$work/list.page"
done
report() { # report NAME TITLE [BASE]: NAME.big against NAME.BASE (fresh)
  local f b base=${3:-fresh}
  f=$(median <"$work/$1.$base"); b=$(median <"$work/$1.big")
  # The pairs' ratios: run i of each, taken one after the other, saw the
  # same machine; their median holds when the load drifts during the runs.
  r=$(paste "$work/$1.big" "$work/$1.$base" | awk '{print $1/$2}' | median)
  awk -v n="$2" -v base="$base" -v f="$f" -v b="$b" -v r="$r" 'BEGIN {printf "%-32s %-5s %7.1f ms   big %7.1f ms   big/%s %.2f   (+%.1f ms)   pairs %.2f\n", n, base, f/1000, b/1000, base, b/f, (b-f)/1000, r}'
}
echo "medians of $runs runs; big data directory: $(du -sh "$big" | cut -f1), $(ls "$big"/checkpoints 2>/dev/null | wc -l) shadow repositories"
report run "darman run --format json"
report lsp "darman lsp to initialize"
report list "darman sessions list"
# The list's default page is the 100 most recent sessions, where the fresh
# directory has as many as the runs above made: the same page of one row
# from both is the history's cost alone.
report list1 "darman sessions list -n 1"
# The same 100 rows from both: the big directory against one of 100
# sessions and no checkpoints.
report list "darman sessions list, 100 rows" page
