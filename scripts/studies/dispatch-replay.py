#!/usr/bin/env python3
"""Replays the small-n dispatch rules of compiler/planning/small_n_dispatch.h on measured files: which
kernel a range file would take at each n under other constants, given each kernel's time from a study of
single files built to take one path at every n.

usage: scripts/studies/dispatch-replay.py STUDY.jsonl RANGE_DIR [--below N] [--short MEAN] [--few W]
                                          [--fill F] [--sms S]
  STUDY.jsonl  results of scripts/studies/generic-warp.cases (labels LAYER_one_warp, LAYER_one_path,
               LAYER_gen_warp: the generic path's warp per row and the balanced path at every n)
  RANGE_DIR    a batch study's work folder (or its NAME.tar.xz unpacked) of range files of the same
               layers: results.jsonl and LAYER/LAYER.json (the reports: family, tiles, the path's ends)
  --below      the balanced path's end (kBalancedBelowN; default 512)
  --short      rows' mean up to which the path runs to 4096 (kBalancedShortRowsMean; default 32)
  --few        warps per SM up to which the path runs on (kBalancedFewWarpsPerSm; default 8)
  --fill       the unrolled launch's fill where the rule (not a measurement) ends the generic path
               (kUnrolledFillAtCrossing; default 0.7)
  --sms        the GPU's SMs (default 132)
Prints, per n of the range study, the geomean x best peer as run and as replayed, and the kernels that
change. A (layer, n) whose replayed kernel is the unrolled one where the run took another cannot be
replayed (the study has no unrolled time there) and is reported.
"""
import argparse
import json
import math
import os
import sys

from bench_results import geomean, read_records
from variants import load

LONGEST_BELOW_N = 4096  # kBalancedLongestBelowN


def path_end(report, a):
    """balanced_path_below_n with the given constants, for the matrix of `report`."""
    rows, nnz = report["input"]["rows"], report["input"]["nnz"]
    if nnz / rows <= a.short:
        return LONGEST_BELOW_N
    few = 128 * (a.few * a.sms // rows) + 1
    return min(few, LONGEST_BELOW_N) if few > a.below else a.below


def kernel_at(report, n, a, replay):
    """'path', 'generic' or 'unrolled': the kernel the file takes at n, as built or under `a`'s rules."""
    k, family = report["kernel"], report["choice"]["family"]
    path = k.get("balanced_path") or {}
    generic_below = k["generic_below_n"]
    path_below = path.get("below_n", 0)
    if replay:
        if family == "unrolled" and k["generic_below_why"].startswith("not measured"):
            fills = math.ceil(a.fill * a.sms * report["choice"]["n1"] / k["tiles"])
            generic_below = max(1, min(fills, report["options"]["n"] // 2))
        path_below = path_end(report, a) if path else 0
        if family != "generic":
            path_below = min(path_below, generic_below)
    if path and path.get("from_n", 4) <= n < path_below:
        return "path"
    return "generic" if family == "generic" or n < generic_below else "unrolled"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("study")
    p.add_argument("range_dir")
    p.add_argument("--below", type=int, default=512)
    p.add_argument("--short", type=float, default=32.0)
    p.add_argument("--few", type=int, default=8)
    p.add_argument("--fill", type=float, default=0.7)
    p.add_argument("--sms", type=int, default=132)
    a = p.parse_args()
    times, _ = load(a.study)
    ran = {}
    for r in read_records([os.path.join(a.range_dir, "results.jsonl")], "dispatch-replay.py"):
        if r.get("failure") or not r.get("spmmc_ms") or not r.get("best_peer_ms"):
            continue
        label, n = r["label"].rsplit("@", 1)
        ran[(label, int(n))] = r["best_peer_ms"] / r["spmmc_ms"]
    reports = {}
    for label in sorted({l for (l, _) in ran}):
        with open(os.path.join(a.range_dir, label, label + ".json"), encoding="utf-8") as f:
            reports[label] = json.load(f)
    for n in sorted({n for (_, n) in ran}):
        before, after, changed = [], [], []
        for label in sorted({l for (l, m) in ran if m == n}):
            report = reports[label]
            was = kernel_at(report, n, a, False)
            now = kernel_at(report, n, a, True)
            speed = ran[(label, n)]
            before.append(speed)
            if now != was:
                if now == "unrolled":
                    print(f"  {label}@{n}: replayed to the unrolled kernel, not timed there; kept as run")
                else:
                    file = "_gen" if report["choice"]["family"] == "generic" else "_one"
                    key = (label + file, "warp" if now == "generic" else "path", n)
                    if key not in times:
                        sys.exit(f"dispatch-replay.py: {a.study}: no result for {key}")
                    ms, peer = times[key]
                    changed.append(f"{label}: {was} {speed:.2f} -> {now} {peer / ms:.2f}")
                    speed = peer / ms
            after.append(speed)
        print(f"n = {n}: {geomean(before):.3f} -> {geomean(after):.3f} x best peer (lowest {min(before):.2f} -> "
              f"{min(after):.2f}; below 0.9: {sum(x < 0.9 for x in before)} -> {sum(x < 0.9 for x in after)})")
        for c in changed:
            print("  " + c)


if __name__ == "__main__":
    main()
