#!/usr/bin/env bash
# Streams answers of 3,000 chunks (18 KB, 1 ms apart) from the scripted
# model into 1, 5 and 20 concurrent sessions of one `darman acp` and one
# `darman lsp`, each run in a fresh data dir, and prints, per run, the
# store's size on disk after the turns and darman's peak RSS; it fails if a
# session's text is not exact and in order or a turn did not end normally
# (see scripts/streamload). Usage:
#   scripts/bench-stream.sh [path/to/darman] [chunks]
set -euo pipefail
bin=${1:-bin/darman}
chunks=${2:-3000}
[ -x "$bin" ] || { echo "no darman binary at $bin: run make build first" >&2; exit 1; }
cd "$(dirname "$0")/.."
go build -o "${TMPDIR:-/tmp}/streamload.$$" ./scripts/streamload
trap 'rm -f "${TMPDIR:-/tmp}/streamload.$$"' EXIT
for front in acp lsp; do
  for n in 1 5 20; do
    "${TMPDIR:-/tmp}/streamload.$$" -darman "$bin" -front "$front" -sessions "$n" -chunks "$chunks"
  done
done
