#!/usr/bin/env bash
# Measures the snapshot before a step (agent/checkpoint) with one file
# changed, by the walk of the whole tree and by the file watcher, and the
# revert of a turn that changed twelve files, on
# generated trees and on a copy of the Go distribution's src, and prints a
# table (issue 36). The trees are made once under /tmp (kept between runs:
# generating 300,000 files takes minutes) and removed with --clean.
#
# A generated tree of N files: nested packages (Go files, 20 to a
# directory, up to five levels), every 50th directory with a chain of
# eight more beneath it (deep paths), one file in 20 binary (random bytes,
# 1-8 KiB), one in 50,000 over the 2 MiB size limit (named as not kept),
# and a quarter of the N in an ignored node_modules; committed (by git
# fast-import, one pack) so the shadow borrows its objects.
#
# Usage:
#   scripts/bench-checkpoint.sh [--iterations N] [SIZE|gosrc ...]   (default: 1000 10000 100000 300000 gosrc)
#   scripts/bench-checkpoint.sh --clean
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
base=/tmp/darman-bench-trees
iters=40
sizes=()
while [ $# -gt 0 ]; do
  case $1 in
    --clean) rm -rf "$base"; echo "removed $base"; exit 0 ;;
    --iterations) iters=$2; shift 2 ;;
    *) sizes+=("$1"); shift ;;
  esac
done
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 100000 300000 gosrc)
mkdir -p "$base"
git() { command git -c user.email=bench@example.com -c user.name=bench -c gc.auto=0 -c maintenance.auto=false "$@"; }

generate() { # generate N DIR
  local n=$1 dir=$2
  rm -rf "$dir.tmp"; mkdir -p "$dir.tmp"
  (cd "$dir.tmp" && git init -q)
  python3 - "$n" "$dir.tmp" <<'PY' | (cd "$dir.tmp" && git fast-import --quiet)
import os, random, sys
n, root = int(sys.argv[1]), sys.argv[2]
rnd = random.Random(n)
out = sys.stdout.buffer
kept = n - n // 4
commit = []
def dirof(d):
    parts = ["src"] + ["p%d" % int(c) for c in str(d)]
    if d % 50 == 7:
        parts += ["deep%d" % k for k in range(8)]
    return "/".join(parts)
def emit(path, data):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as f:
        f.write(data)
    out.write(b"blob\nmark :%d\ndata %d\n" % (len(commit) + 1, len(data)))
    out.write(data + b"\n")
    commit.append(path)
emit(".gitignore", b"node_modules/\n*.o\n")
for i in range(kept - 1):
    d = dirof(i // 20)
    if i % 50000 == 49999:
        path, data = "%s/big%d.bin" % (d, i), os.urandom(3 << 20)
    elif i % 20 == 19:
        path, data = "%s/asset%d.bin" % (d, i), os.urandom(rnd.randint(1024, 8192))
    else:
        path = "%s/f%d.go" % (d, i)
        data = b"package p%d\n\n// File %d of the generated tree.\nfunc F%d() int { return %d }\n" % (i // 20 % 10, i, i, i * 7)
    emit(path, data)
for i in range(n // 4):
    full = os.path.join(root, "node_modules", "pkg%d" % (i // 40), "lib", "m%d.js" % i)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as f:
        f.write(b"module.exports = %d;\n" % i)
out.write(b"commit refs/heads/main\ncommitter bench <bench@example.com> 0 +0000\ndata 9\ngenerated\n")
for k, p in enumerate(commit):
    out.write(b"M 100644 :%d %s\n" % (k + 1, p.encode()))
out.write(b"\n")
PY
  (cd "$dir.tmp" && git symbolic-ref HEAD refs/heads/main && git read-tree HEAD)
  mv "$dir.tmp" "$dir"
}

gosrc() { # gosrc DIR: a committed copy of $(go env GOROOT)/src
  local dir=$1
  rm -rf "$dir.tmp"; cp -r "$(go env GOROOT)/src" "$dir.tmp"
  (cd "$dir.tmp" && git init -q && git add -A && git commit -q -m src)
  mv "$dir.tmp" "$dir"
}

printf '| tree | files | walk p50 | walk p99 | watcher p50 | watcher p99 | watcher, a new file each step: p50 | p99 | watched dirs | watcher set-up | shadow | revert of a 12-file turn: p50 | p99 |\n'
printf '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n'
for size in "${sizes[@]}"; do
  dir=$base/$size
  if [ ! -d "$dir" ]; then
    if [ "$size" = gosrc ]; then gosrc "$dir"; else generate "$size" "$dir"; fi
  fi
  files=$(find "$dir" -path "$dir/.git" -prune -o -type f -print | wc -l)
  out=$(cd "$repo" && DARMAN_BENCH_TREE=$dir go test ./agent/checkpoint -run '^$' -bench '^BenchmarkTreeSnapshot$' -benchtime "${iters}x" -timeout 60m 2>&1) || { echo "$out" >&2; exit 1; }
  echo "$out" > "$base/$size.out"
  metric() { # metric SUB NAME
    echo "$out" | awk -v s="/$1-[0-9]+$" -v name="$2" '$1 ~ s {for (i = 2; i < NF; i++) if ($(i+1) == name) print $i}'
  }
  printf '| %s | %s | %s ms | %s ms | %s ms | %s ms | %s ms | %s ms | %s | %s ms | %s MiB | %s ms | %s ms |\n' "$size" "$files" \
    "$(metric walk p50-ms)" "$(metric walk p99-ms)" "$(metric watch p50-ms)" "$(metric watch p99-ms)" \
    "$(metric watch-create p50-ms)" "$(metric watch-create p99-ms)" \
    "$(metric watch watched-dirs)" "$(metric watch setup-ms)" "$(metric watch shadow-MiB)" \
    "$(metric revert p50-ms)" "$(metric revert p99-ms)"
done
