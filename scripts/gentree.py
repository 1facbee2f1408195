#!/usr/bin/env python3
"""Generate a repository-like tree of N files for darman's scale benchmarks.

usage: scripts/gentree.py N DIR

DIR gets N files outside node_modules (nested packages up to 9 levels
deep, Go/TypeScript/Python/Markdown sources of 0.2-6 KB, 1 file in 50 a
binary with NUL bytes, 1 in 1,000 holding the literal ScaleNeedle), plus
N/5 files under an ignored node_modules (.gitignore) and N/50 under an
ignored build/ directory. The same N gives the same tree (a fixed seed).
"""
import os
import random
import sys

WORDS = ("alpha beta gamma delta error value result context request handle "
         "buffer stream config server client session token parse render "
         "update cache index query store event state close open read write").split()


def body(rng, ext, i):
    lines = []
    n = rng.randint(4, 120)
    for j in range(n):
        w = [rng.choice(WORDS) for _ in range(rng.randint(2, 8))]
        if ext == ".go":
            lines.append("func %s%d(%s string) error { return nil } // %s" % (w[0].capitalize(), j, w[1], " ".join(w[2:])))
        elif ext == ".ts":
            lines.append("export const %s%d = (%s: string) => %s;" % (w[0], j, w[1], " + ".join(repr(x) for x in w[2:]) or "1"))
        elif ext == ".py":
            lines.append("def %s_%d(%s):\n    return %r" % (w[0], j, w[1], " ".join(w[2:])))
        else:
            lines.append(" ".join(w))
    if i % 1000 == 7:
        lines.insert(rng.randrange(len(lines)), "// ScaleNeedle %d marks this file" % i)
    return "\n".join(lines) + "\n"


def tree(rng, top, count, exts, start):
    os.makedirs(top, exist_ok=True)
    dirs = [top]
    made = 0
    while made < count:
        d = rng.choice(dirs)
        depth = d.count(os.sep) - top.count(os.sep)
        if depth < 9 and rng.random() < 0.12:
            nd = os.path.join(d, "%s%d" % (rng.choice(WORDS), rng.randint(0, 99)))
            os.makedirs(nd, exist_ok=True)
            dirs.append(nd)
            continue
        i = start + made
        if i % 50 == 3:
            path = os.path.join(d, "blob%d.bin" % i)
            with open(path, "wb") as f:
                f.write(rng.randbytes(rng.randint(512, 8192)) + b"\0ScaleNeedle\0")
        else:
            ext = rng.choice(exts)
            path = os.path.join(d, "%s_%d%s" % (rng.choice(WORDS), i, ext))
            with open(path, "w") as f:
                f.write(body(rng, ext, i))
        made += 1


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    n, top = int(sys.argv[1]), sys.argv[2]
    rng = random.Random(n)
    os.makedirs(top, exist_ok=True)
    with open(os.path.join(top, ".gitignore"), "w") as f:
        f.write("node_modules/\n/build/\n*.log\n")
    tree(rng, os.path.join(top, "src"), n, [".go", ".ts", ".py", ".md"], 0)
    tree(rng, os.path.join(top, "node_modules"), n // 5, [".js", ".ts", ".json"], n)
    tree(rng, os.path.join(top, "build"), n // 50, [".js", ".log"], n + n // 5)


main()
