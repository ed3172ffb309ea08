#!/usr/bin/env python3
"""Checks (and refits) the size guard's ptxas model against kernel-study builds.

The model (codegen/size_guard.cpp): ptxas seconds of a file of K kernels, the non-zeros and loads
taken as equal parts, is  K * e^a * (nnz/K)^b * (NNC/K)^c * M1^d * V^0.6,  and the guard takes
2 x that plus 2 s of nvcc start-up. This script reads kernel-study work folders (each case folder
holds LABEL.json, spmmc's report, and nvcc.time.csv / nvcc.rc from the build), prints every
build's measured ptxas time against the model, the spread of measured / model, the builds that
ran past their timeout (lower bounds) against the guard's estimate, and a least-squares refit of
(a, b, c, d) on log time over the completed builds.

usage: scripts/studies/fit-size-guard.py [--coefficients a,b,c,d] DIR [DIR ...]
  --coefficients   the model to check (default: the guard's, -13.123,0.592,1.128,0.162)
"""
import csv
import glob
import json
import math
import os
import sys

GUARD = (-13.123, 0.592, 1.128, 0.162)


def ptxas_seconds(time_csv):
    total = 0.0
    with open(time_csv) as f:
        for row in csv.reader(f):
            if len(row) >= 8 and row[1].strip() == "ptxas":
                total += float(row[6]) / (1000.0 if row[7].strip() == "ms" else 1.0)
    return total


def builds(dirs):
    for d in dirs:
        for report in sorted(glob.glob(os.path.join(d, "*", "*.json"))):
            case = os.path.dirname(report)
            label = os.path.basename(case)
            if os.path.basename(report) != label + ".json":
                continue
            with open(report) as f:
                j = json.load(f)
            k = j.get("kernel", {})
            rc_path = os.path.join(case, "nvcc.rc")
            if "fmas" not in k or not os.path.exists(rc_path) or j.get("choice", {}).get("family") == "generic":
                continue  # the guard models the unrolled family only
            rc = open(rc_path).read().strip()
            b = {"label": label, "nnz": k["fmas"] / j["choice"]["cols_per_thread"], "nnc": max(k["loads_per_thread"], 1),
                 "kernels": k.get("kernels", 1), "m1": j["choice"]["m1"], "v": j["choice"]["cols_per_thread"],
                 "estimate": (k.get("estimate") or {}).get("nvcc_seconds", float("nan"))}
            if rc == "0" and os.path.exists(os.path.join(case, "nvcc.time.csv")):
                b["ptxas"] = ptxas_seconds(os.path.join(case, "nvcc.time.csv"))
            elif rc in ("124", "137"):
                seconds = os.path.join(case, "nvcc.seconds")
                b["timed_out_after"] = float(open(seconds).read()) if os.path.exists(seconds) else float("nan")
            else:
                continue
            yield b


def model(b, c):
    k = b["kernels"]
    return (k * math.exp(c[0]) * (b["nnz"] / k) ** c[1] * (b["nnc"] / k) ** c[2] * b["m1"] ** c[3] * b["v"] ** 0.6)


def solve(rows, ys):
    """Least squares for y = X beta (normal equations, Gauss-Jordan)."""
    n = len(rows[0])
    a = [[sum(r[i] * r[j] for r in rows) for j in range(n)] + [sum(r[i] * y for r, y in zip(rows, ys))] for i in range(n)]
    for i in range(n):
        p = max(range(i, n), key=lambda r: abs(a[r][i]))
        a[i], a[p] = a[p], a[i]
        for r in range(n):
            if r != i and a[i][i] != 0:
                f = a[r][i] / a[i][i]
                a[r] = [x - f * y for x, y in zip(a[r], a[i])]
    return [a[i][n] / a[i][i] for i in range(n)]


def main():
    args = sys.argv[1:]
    coeffs = GUARD
    if args[:1] == ["--coefficients"]:
        coeffs = tuple(float(x) for x in args[1].split(","))
        args = args[2:]
    if not args:
        raise SystemExit(__doc__)
    done, lower = [], []
    for b in builds(args):
        (done if "ptxas" in b else lower).append(b)
    print(f"{len(done)} completed builds, {len(lower)} past their timeout; model e^{coeffs[0]} nnz_k^{coeffs[1]} "
          f"NNC_k^{coeffs[2]} M1^{coeffs[3]}")
    ratios = []
    for b in sorted(done, key=lambda b: b["ptxas"]):
        r = b["ptxas"] / model(b, coeffs)
        ratios.append(r)
        print(f"  {b['label'][:58]:58s} nnz {b['nnz']:7.0f} K {b['kernels']:3d} M1 {b['m1']:2d}  ptxas {b['ptxas']:6.1f} s"
              f"  model {model(b, coeffs):6.1f} s  ratio {r:4.2f}  guard {b['estimate']:5.0f} s")
    for b in lower:
        print(f"  {b['label'][:58]:58s} nnz {b['nnz']:7.0f} K {b['kernels']:3d} M1 {b['m1']:2d}  ptxas > "
              f"{b['timed_out_after']:.0f} s (timeout)  model {model(b, coeffs):6.1f} s  guard {b['estimate']:5.0f} s")
    if ratios:
        print(f"measured / model: {min(ratios):.2f} to {max(ratios):.2f}, geomean "
              f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}")
    usable = [b for b in done if b["ptxas"] >= 1.0]  # below a second, start-up noise dominates
    if len(usable) >= 8:
        rows = [[1.0, math.log(b["nnz"] / b["kernels"]), math.log(b["nnc"] / b["kernels"]), math.log(b["m1"])]
                for b in usable]
        ys = [math.log(b["ptxas"] / (b["kernels"] * b["v"] ** 0.6)) for b in usable]
        fit = solve(rows, ys)
        fr = [b["ptxas"] / model(b, fit) for b in usable]
        cr = [b["ptxas"] / model(b, coeffs) for b in usable]
        print(f"over the {len(usable)} builds of at least 1 s: measured / model {min(cr):.2f} to {max(cr):.2f}")
        print(f"refit: a {fit[0]:.3f}, b {fit[1]:.3f}, c {fit[2]:.3f}, d {fit[3]:.3f}; measured / refit "
              f"{min(fr):.2f} to {max(fr):.2f}")
        for b in lower:
            print(f"  refit for {b['label'][:58]:58s} {model(b, fit):6.1f} s (ran past {b['timed_out_after']:.0f} s)")


if __name__ == "__main__":
    main()
