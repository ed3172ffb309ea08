#!/usr/bin/env python3
"""The heuristic's pick (`spmmc compile --tune none`) of every layer of kernel-study cases files, by
two spmmc binaries side by side: which layers a change of choose_tile_by_heuristic moves, and to what.

usage: scripts/studies/heuristic-picks.py CASES... --old BIN [--new BIN] [--jobs J] [--all]
  CASES   kernel-study cases (LABEL|MATRIX|N|FLAGS), e.g. scripts/studies/all-layers.cases; the
          FLAGS are ignored (each layer is compiled with --tune none only)
  --old   the spmmc before the change (e.g. a build of the commit before it, copied aside)
  --new   the spmmc after it (default build/spmmc)
  --jobs  compiles at once (default 8)
  --all   print every layer, not only those whose pick changes
Prints one Markdown row per layer (the tile, or "generic" where --family auto takes the generic
family; launch bounds' blocks per SM in brackets), the new pick's reason where it moved, then a
count. Needs no GPU. Run from the repository root.
"""
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile


def pick(spmmc, matrix, n, work):
    """(tile text, why) of `spmmc compile --tune none` of one layer."""
    result = subprocess.run([spmmc, "compile", matrix, "--n", str(n), "--tune", "none", "--name", "k", "-o", work,
                             "--quiet"], capture_output=True, text=True)
    if result.returncode != 0:
        return f"failed ({result.returncode})", result.stderr.strip().splitlines()[-1:]
    with open(os.path.join(work, "k.json")) as f:
        choice = json.load(f)["choice"]
    if choice["family"] != "unrolled":
        return choice["family"], choice.get("family_why", "")
    tile = f"{choice['m1']}x{choice['n1']}" + (f"x{choice['cols_per_thread']}" if choice["cols_per_thread"] != 1 else "")
    return f"{tile} [{choice['min_blocks_per_sm']}]", choice["why"]


def compare(case, old, new, root):
    label, matrix, n = case
    picks = []
    for i, spmmc in enumerate((old, new)):
        work = os.path.join(root, f"{label}.{i}")
        os.makedirs(work, exist_ok=True)
        picks.append(pick(spmmc, matrix, n, work))
    return label, n, picks[0], picks[1]


def read_cases(paths):
    cases = []
    for path in paths:
        with open(path) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                label, matrix, n = line.rstrip("\n").split("|")[:3]
                cases.append((label, matrix, int(n)))
    return cases


def main(argv):
    options = {"--old": None, "--new": "build/spmmc", "--jobs": "8"}
    show_all = "--all" in argv
    argv = [a for a in argv if a != "--all"]
    for key in options:
        if key in argv:
            i = argv.index(key)
            options[key] = argv[i + 1]
            del argv[i:i + 2]
    if not argv or argv[0] in ("-h", "--help") or not options["--old"]:
        print(__doc__.strip())
        return 0 if argv and argv[0] in ("-h", "--help") else 64
    cases = read_cases(argv)
    with tempfile.TemporaryDirectory() as root, concurrent.futures.ThreadPoolExecutor(int(options["--jobs"])) as pool:
        rows = list(pool.map(lambda c: compare(c, options["--old"], options["--new"], root), cases))
    print("| layer | n | old pick | new pick | new pick's reason |")
    print("|---|--:|---|---|---|")
    moved = 0
    for label, n, (old_tile, _), (new_tile, new_why) in rows:
        changed = old_tile != new_tile
        moved += changed
        if changed or show_all:
            print(f"| {label} | {n} | {old_tile} | {new_tile}{'' if changed else ' (same)'} | {new_why if changed else ''} |")
    print(f"\n{moved} of {len(rows)} layers change their pick.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
