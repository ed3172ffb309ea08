#!/usr/bin/env python3
"""The 8x1 non-zero vectors of FlashSparse (issue 26, docs/design/precision.md), counted on the CPU.

A window of 8 rows of A holds one 8x1 non-zero vector per column with a non-zero in it; the
tensor-core kernel multiplies them 8 at a time (FP16/BF16 m16n8k8, swap-and-transpose) or 4 at a
time (TF32 m16n8k4), the last group of a window padded. Which rows share a window is free ahead of
time: spmmc's row reordering (LO-SpMM Algorithm 1, --reorder overlap) groups rows that share
columns, which is exactly what makes fewer vectors. This script counts, per matrix, with the rows
in their natural order and reordered: the 8x1 vectors (`spmmc plan --json`: reordering[M1 = 8],
nnc_sum), their groups of 8 and 4 (the MMAs per 8 columns of B), the zeros the vectors carry, and
the same for 16x1 vectors (TC-GNN, DTC-SpMM) for comparison, with the rows in their natural order,
reordered by LO-SpMM's Algorithm 1 (--reorder overlap) and grown for few columns (--reorder grow),
and the best of the three per matrix. No GPU is needed.

usage: scripts/studies/vector-count.py [CASES...] [--graphs DIR] [--spmmc PATH] [--jobs J] [--json FILE]
  CASES    kernel-study case files (LABEL|MATRIX|N|FLAGS); default scripts/studies/all-layers.cases
  --graphs every *.mtx of DIR too (default ../shared/data/graphs; "" for none)
Prints a Markdown table per class of matrix and a summary line last.
"""
import argparse
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read_cases(paths):
    cases = []
    for path in paths:
        for line in open(path):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            label, matrix, n, flags = (line.split("|") + ["", "", "", ""])[:4]
            cases.append((label, os.path.join(ROOT, matrix) if not os.path.isabs(matrix) else matrix, int(n), flags))
    return cases


def klass(label, matrix):
    if "/graphs/" in matrix:
        return "graphs"
    if "transformer" in matrix:
        return "transformer"
    if "rn50" in matrix:
        return "ResNet-50"
    if "mobilenet" in matrix:
        return "MobileNet"
    return "other"


METHODS = ["overlap", "grow"]  # spmmc's --reorder methods besides the natural order ("none")


def count(spmmc, case):
    label, matrix, n, flags = case
    words = shlex.split(flags)
    read_flags = [w for pair in zip(words[::2], words[1::2]) if pair[0] in ("--seed", "--values", "--threshold", "--tensor")
                  for w in pair]
    out = {}
    for method in METHODS:
        cmd = [spmmc, "plan", matrix, "--n", str(n), "--json", "--th-row", "100", "--th-col", "1", "--reorder", method] + read_flags
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            return case, None, p.stderr.strip()
        j = json.loads(p.stdout)
        per_m1 = {r["m1"]: r for r in j["reordering"]}
        if 8 not in per_m1 or 16 not in per_m1:
            return case, None, "M1 = 8 or 16 not in the plan's axes"
        out["nnz"] = j["matrix"]["nnz"]
        out["none"] = {"v8": per_m1[8]["before"]["nnc_sum"], "g8": per_m1[8]["before"]["vector_groups_of_8"],
                       "g4": per_m1[8]["before"]["vector_groups_of_4"], "v16": per_m1[16]["before"]["nnc_sum"]}
        out[method] = {"v8": per_m1[8]["after"]["nnc_sum"], "g8": per_m1[8]["after"]["vector_groups_of_8"],
                       "g4": per_m1[8]["after"]["vector_groups_of_4"], "v16": per_m1[16]["after"]["nnc_sum"],
                       "seconds": per_m1[8]["seconds"]}
    return case, out, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", nargs="*", default=[os.path.join(ROOT, "scripts/studies/all-layers.cases")])
    ap.add_argument("--graphs", default=os.path.join(ROOT, "..", "shared", "data", "graphs"))
    ap.add_argument("--spmmc", default=os.path.join(ROOT, os.environ.get("SPMMC_BUILD_DIR", "build"), "spmmc"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    cases = read_cases(a.cases)
    if a.graphs and os.path.isdir(a.graphs):
        for f in sorted(os.listdir(a.graphs)):
            if f.endswith(".mtx"):
                cases.append((f[:-4], os.path.join(a.graphs, f), 128, ""))
    elif a.graphs:
        print(f"vector-count: no folder {a.graphs}: graphs skipped", file=sys.stderr)
    # A layer at several n is one matrix: count it once.
    seen, unique = set(), []
    for c in cases:
        if c[1] not in seen:
            seen.add(c[1])
            unique.append(c)
    records, failed = [], []
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for case, r, err in pool.map(lambda c: count(a.spmmc, c), unique):
            if r is None:
                failed.append((case[0], err))
                print(f"vector-count: {case[0]}: {err}", file=sys.stderr)
                continue
            r.update({"label": case[0], "matrix": os.path.relpath(case[1], ROOT), "class": klass(case[0], case[1])})
            # What an ahead-of-time compiler can take: the order with the fewest groups of 8.
            r["best"] = min((r[m] for m in ["none"] + METHODS), key=lambda x: (x["g8"], x["v8"]))
            records.append(r)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(records, f, indent=1)

    def pct(x):
        return f"{100 * x:+.1f}%"

    orders = ["none"] + METHODS + ["best"]
    print("8x1 vectors (non-empty columns of 8-row windows) and their groups of 8 (FP16/BF16 MMAs per 8 columns of B),")
    print("summed per class; change against the natural order (none); zeros carried per non-zero, 8x1 and 16x1:\n")
    print("| class | matrices | nnz | vectors: none | overlap | grow | best | groups of 8: none | overlap | grow | best "
          "| nnz per 8x8 block (best) | zeros per nnz, 8x1 (best) | 16x1 (best) |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    totals = {o: {"v8": 0, "g8": 0} for o in orders}
    total_nnz = 0
    for cls in ["transformer", "ResNet-50", "MobileNet", "graphs", "other"]:
        rs = [r for r in records if r["class"] == cls]
        if not rs:
            continue
        nnz = sum(r["nnz"] for r in rs)
        total_nnz += nnz
        v = {o: sum(r[o]["v8"] for r in rs) for o in orders}
        g = {o: sum(r[o]["g8"] for r in rs) for o in orders}
        v16 = sum(r["best"]["v16"] for r in rs)
        for o in orders:
            totals[o]["v8"] += v[o]
            totals[o]["g8"] += g[o]
        cells = " | ".join([str(v["none"])] + [f"{v[o]} ({pct(v[o] / v['none'] - 1)})" for o in orders[1:]])
        gcells = " | ".join([str(g["none"])] + [f"{g[o]} ({pct(g[o] / g['none'] - 1)})" for o in orders[1:]])
        print(f"| {cls} | {len(rs)} | {nnz} | {cells} | {gcells} | {nnz / g['best']:.1f} of 64 | {(8 * v['best'] - nnz) / nnz:.2f} "
              f"| {(16 * v16 - nnz) / nnz:.2f} |")
    print("\n| matrix | nnz | groups of 8: none | overlap | grow | grow s (M1 = 8) |")
    print("|---|--:|--:|--:|--:|--:|")
    for r in sorted(records, key=lambda r: (r["class"], r["label"])):
        g0 = r["none"]["g8"]
        print(f"| {r['label']} | {r['nnz']} | {g0} | {r['overlap']['g8']} ({pct(r['overlap']['g8'] / g0 - 1)}) "
              f"| {r['grow']['g8']} ({pct(r['grow']['g8'] / g0 - 1)}) | {r['grow']['seconds']:.3f} |")
    if records:
        summary = ", ".join(f"{o} {pct(totals[o]['g8'] / totals['none']['g8'] - 1)}" for o in orders[1:])
        print(f"\nvector-count: {len(records)} matrices ({len(failed)} failed); groups of 8 against the natural order: {summary}; "
              f"best order: {total_nnz / totals['best']['g8']:.1f} non-zeros per 8x8 block")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
