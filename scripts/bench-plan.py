#!/usr/bin/env python3
"""Planning benchmark: runs `spmmc plan --json` on every DLMC file of the shared data set at
its typical dense width and prints Markdown tables: the tile space after each constraint, the
largest non-empty-column count per A-tile before and after reordering (Algorithm 1), and the
planning time (load excluded). Typical n: transformer 4096 (batch 32 x sequence 128); ResNet-50
32 x the layer's spatial size from rn50_batchsizes.txt (the classifier: 32).

usage: scripts/bench-plan.py [SHARED_DATA_DIR] [--spmmc build/spmmc] [--target h100]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def typical_n(rel_path, batch_sizes):
    model = rel_path.split("/")[0]
    if model == "transformer":
        return 4096
    layer = os.path.splitext(os.path.basename(rel_path))[0]
    return 32 * batch_sizes[layer]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data", nargs="?", default="../shared/data")
    ap.add_argument("--spmmc", default="build/spmmc")
    ap.add_argument("--target", default="h100")
    args = ap.parse_args()
    dlmc = os.path.join(args.data, "dlmc")
    if not os.path.isdir(dlmc):
        print(f"bench-plan: {dlmc} is absent: skipped", file=sys.stderr)
        return 0
    batch_sizes = {}
    with open(os.path.join(dlmc, "rn50_batchsizes.txt")) as f:
        for line in f:
            name, size = line.strip().split(",")
            batch_sizes[name] = int(size)
    files = sorted(os.path.relpath(os.path.join(d, f), dlmc)
                   for d, _, fs in os.walk(dlmc) for f in fs if f.endswith(".smtx"))
    rows = []
    for rel in files:
        n = typical_n(rel, batch_sizes)
        start = time.perf_counter()
        out = subprocess.run([args.spmmc, "plan", os.path.join(dlmc, rel), "--n", str(n), "--json",
                              "--target", args.target], capture_output=True, text=True)
        wall = time.perf_counter() - start
        if out.returncode not in (0, 65) or not out.stdout:
            print(f"bench-plan: {rel}: exit {out.returncode}: {out.stderr.strip()}", file=sys.stderr)
            return 1
        j = json.loads(out.stdout)
        reorder = {r["m1"]: r for r in j["reordering"]}
        rows.append(dict(rel=rel, n=n, j=j, reorder=reorder, wall=wall))

    print(f"target {args.target}; {len(rows)} DLMC files; plan time excludes loading; wall = whole command\n")
    print("| group | files | space after register / hardware / balance (median) | max nnc reduction at M1 = 8 / 32 (median) | plan ms (median / max) | wall s (max) |")
    print("|---|---|---|---|---|---|")
    groups = {}
    for r in rows:
        groups.setdefault("/".join(r["rel"].split("/")[:3]), []).append(r)
    for g, rs in sorted(groups.items()):
        med = lambda key: statistics.median(r["j"]["space"][key] for r in rs)
        red = lambda m1: statistics.median(1 - r["reorder"][m1]["after"]["max_nnc"] / r["reorder"][m1]["before"]["max_nnc"] for r in rs)
        plan_ms = [r["j"]["seconds"]["plan"] * 1e3 for r in rs]
        print(f"| {g} | {len(rs)} | {med('after_register'):.0f} / {med('after_hardware'):.0f} / {med('after_balance'):.0f} "
              f"| {100 * red(8):.1f}% / {100 * red(32):.1f}% | {statistics.median(plan_ms):.1f} / {max(plan_ms):.1f} "
              f"| {max(r['wall'] for r in rs):.2f} |")

    print("\nPer file (space: all -> register -> hardware -> balance; max nnc natural -> reordered):\n")
    print("| file | M x K | nnz | n | space | max nnc M1=8 | max nnc M1=32 | plan ms |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        j, s = r["j"], r["j"]["space"]
        m = j["matrix"]
        nnc = lambda m1: f'{r["reorder"][m1]["before"]["max_nnc"]} -> {r["reorder"][m1]["after"]["max_nnc"]}'
        print(f"| {r['rel'][:-5]} | {m['rows']} x {m['cols']} | {m['nnz']} | {r['n']} | "
              f"{s['all']} -> {s['after_register']} -> {s['after_hardware']} -> {s['after_balance']} | "
              f"{nnc(8)} | {nnc(32)} | {j['seconds']['plan'] * 1e3:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
