#!/usr/bin/env python3
"""Times `BINARY version` for several binaries in turns, many times over.

Usage: scripts/bench-version-pairs.py RUNS BINARY [BINARY ...]

Each round starts every binary once, the order reversed every other round,
so that all of them see the same machine; it prints each one's median, 10th
and 90th percentile wall time from spawn to exit, in ms. Run it with a
stripped Go hello world among the binaries to read the figures against
the machine's own process start. Differences under a millisecond need
several hundred runs to show above the noise of a shared 2-core VM, which
scripts/bench-startup.sh's 40 runs do not give.

The page cache matters: a binary as `go build -o` leaves it (the linker
writes its output through a memory mapping) started 1.1-1.7 ms slower
here than the same bytes copied with cp, and both differed again after
`echo 3 > /proc/sys/vm/drop_caches`. Compare binaries in the same state:
drop the caches, or copy each one, before a run.
"""
import os
import statistics
import sys
import time


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    runs, bins = int(sys.argv[1]), [os.path.abspath(b) for b in sys.argv[2:]]
    for b in bins:
        if not os.access(b, os.X_OK):
            print(f"{b}: not an executable", file=sys.stderr)
            return 2
    times = {b: [] for b in bins}
    devnull = os.open(os.devnull, os.O_WRONLY)
    for i in range(runs):
        for b in bins if i % 2 == 0 else bins[::-1]:
            start = time.perf_counter_ns()
            pid = os.posix_spawn(b, [b, "version"], os.environ,
                                 file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)])
            _, status = os.waitpid(pid, 0)
            times[b].append((time.perf_counter_ns() - start) / 1e6)
            if status != 0:
                print(f"{b} version exited with status {status}", file=sys.stderr)
                return 1
    for b in bins:
        t = sorted(times[b])
        print(f"{b:40} median {statistics.median(t):6.2f} ms  p10 {t[len(t) // 10]:6.2f}  p90 {t[9 * len(t) // 10]:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
