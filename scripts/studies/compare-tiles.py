#!/usr/bin/env python3
"""Study 16's table: the same layers timed with two tiles (two kernel-study tables), side by side,
with the heuristic's resident-warp share of M1 = 32 over M1 = 16 and its pick.

usage: scripts/studies/compare-tiles.py CASES BASE.md OTHER.md [--spmmc BIN]
  CASES     the kernel-study cases of OTHER.md (LABEL|MATRIX|N|FLAGS): the layers to compare
  BASE.md   kernel-study table(s) with the same labels (e.g. the default at M1 = 16), comma-separated
  OTHER.md  kernel-study table(s) of CASES, comma-separated
  --spmmc   the spmmc binary (default build/spmmc): `spmmc compile --tune none` of each layer,
            into a temporary folder, gives the share and the pick from its report's choice.why
Prints one Markdown row per layer, sorted by the share, then the geomean of OTHER / BASE over the
layers the heuristic gives M1 = 32 and over the others. Run from the repository root.
"""
import json
import math
import re
import subprocess
import sys
import tempfile


def read_rows(paths):
    rows = {}
    for path in paths.split(","):
        with open(path) as f:
            for line in f:
                cells = [c.strip() for c in line.split("|")]
                if len(cells) > 14 and cells[1] not in ("case", "") and not cells[1].startswith("-"):
                    rows[cells[1]] = cells
    return rows


def heuristic(spmmc, matrix, n, work):
    """(M1 of the pick, the warp share in its why, or None where the rule did not compare)."""
    subprocess.run([spmmc, "compile", matrix, "--n", str(n), "--name", "k", "-o", work, "--quiet"], check=True)
    with open(f"{work}/k.json") as f:
        choice = json.load(f)["choice"]
    share = re.search(r"M1 = 16 [0-9.]+: ([0-9.]+)", choice["why"])
    return choice["m1"], float(share.group(1)) if share else None


def main(argv):
    spmmc = "build/spmmc"
    if "--spmmc" in argv:
        i = argv.index("--spmmc")
        spmmc = argv[i + 1]
        del argv[i:i + 2]
    if len(argv) != 3 or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv and argv[0] in ("-h", "--help") else 64
    cases_path, base_paths, other_paths = argv
    base, other = read_rows(base_paths), read_rows(other_paths)
    table = []
    with tempfile.TemporaryDirectory() as work:
        with open(cases_path) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                label, matrix, n, _ = line.rstrip("\n").split("|", 3)
                if label not in base or label not in other:
                    print(f"{label}: not in both tables", file=sys.stderr)
                    continue
                b, o = base[label], other[label]
                ratio = float(o[10]) / float(b[10])
                m1, share = heuristic(spmmc, matrix, int(n), work)
                table.append((share if share is not None else -1.0, label, b[4], o[4], float(b[10]), float(o[10]),
                              ratio, o[9], m1))
    table.sort()
    print("| layer | base tile | other tile | base TFLOP/s | other TFLOP/s | other / base | other spill B "
          "| warp share | heuristic M1 |")
    print("|---|---|---|--:|--:|--:|--:|--:|--:|")
    for share, label, bt, ot, bf, of, ratio, spill, m1 in table:
        print(f"| {label} | {bt} | {ot} | {bf:.2f} | {of:.2f} | {ratio:.2f} | {spill} | "
              f"{'-' if share < 0 else f'{share:.2f}'} | {m1} |")
    for name, keep in (("M1 = 32 by the heuristic", lambda r: r[8] == 32), ("M1 = 16 by the heuristic", lambda r: r[8] != 32)):
        ratios = [r[6] for r in table if keep(r)]
        if ratios:
            print(f"{name}: {len(ratios)} layers, other / base geomean "
                  f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}, {min(ratios):.2f}-{max(ratios):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
