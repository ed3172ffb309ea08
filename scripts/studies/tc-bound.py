#!/usr/bin/env python3
"""The MMA work of a FlashSparse-style tensor-core SpMM as a fraction of the dense GEMM's (issue 26),
counted on the CPU: the bound it puts on the sparse kernel against cuBLAS HGEMM.

The tensor-core family cuts A into windows of 8 rows (rows grown for few columns: --reorder grow);
each column with a non-zero in a window is one 8x1 vector, and every group of 8 vectors is one 8x8
block of A multiplied as a dense block by mma.sync (m16n8k8, the last group of a window padded).
Per layer, from `spmmc plan MATRIX --n N --reorder grow --json` (reordering[m1 = 8].after.
vector_groups_of_8, and the same at m1 = 16 for windows of 16 rows, whose groups are 16x8 blocks):

    f8  = groups8  * 8 * 8  / (M * K)      f16 = groups16 * 16 * 8 / (M * K)

is the sparse kernel's MMA work (flops of its dense blocks) against the dense GEMM's (M * K * n
multiply-adds; n cancels). Even with zero overhead (B's rows gathered for free, no index work) a
sparse kernel whose MMAs ran exactly as fast as the dense GEMM's would run at most 1/f times as fast
as that GEMM. If mma.sync runs at R times the dense GEMM's achieved tensor throughput
(R = mma_peak's m16n8k8 f16 TFLOP/s / cuBLAS HGEMM's TFLOP/s, tools/microbench/mma_peak.cu;
on the H100 HGEMM uses wgmma, so R < 1 is expected), the bound is R / f.

Layers are grouped by sparsity band (1 - nnz / (M K); edges lowered by 0.005 so that a layer pruned
to a nominal 0.9 lands in 0.9-0.95, as in geomeans.py) and class (label prefixes tr_, rn_, mbnet_;
graph_ cases are skipped). The plan runs with --th-row 100 --th-col 1: they only relax the tile
candidates' filters (so that no plan exits 65), not the grow reordering. No GPU is needed.

usage: scripts/studies/tc-bound.py [--cases FILE] [--jobs J] [--mma-ratio R] [--json OUT]
  --cases      kernel-study case file, LABEL|MATRIX|N|FLAGS[|NVCC FLAGS] (default
               scripts/studies/all-fp16.cases); MATRIX relative to the repository root
  --jobs       parallel spmmc plan runs (default 2)
  --mma-ratio  R above (default 1.0)
  --json       also write the per-layer rows to OUT
Environment: SPMMC_BUILD_DIR (default build-tuner): the spmmc binary is $SPMMC_BUILD_DIR/spmmc.
Prints the command line and date, one Markdown table per sparsity band, and a summary line last.
Exit: 0 every layer counted; 1 some failed (the tables hold the others); 2 usage; 66 no spmmc binary.
"""
import argparse
import concurrent.futures
import datetime
import json
import math
import os
import shlex
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLASSES = [("tr_", "transformer"), ("rn_", "ResNet-50"), ("mbnet_", "MobileNet")]
BANDS = [("< 0.7", 0.0, 0.695), ("0.7-0.8", 0.695, 0.795), ("0.8-0.9", 0.795, 0.895),
         ("0.9-0.95", 0.895, 0.945), (">= 0.95", 0.945, 1.01)]
READ_FLAGS = ("--seed", "--values", "--threshold", "--tensor")  # flags of a case that change the matrix read


def read_cases(path):
    """The DNN layers of a case file: (label, class, matrix path, n, plan flags that affect reading)."""
    cases = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            label, matrix, n, flags = (line.split("|") + ["", "", "", ""])[:4]
            cls = next((name for prefix, name in CLASSES if label.startswith(prefix)), None)
            if cls is None:  # graph_ and anything else that is not a DNN layer
                continue
            words = shlex.split(flags)
            read = [w for pair in zip(words[::2], words[1::2]) if pair[0] in READ_FLAGS for w in pair]
            cases.append((label, cls, matrix if os.path.isabs(matrix) else os.path.join(ROOT, matrix), int(n), read))
    return cases


def plan_layer(spmmc, case):
    """Runs spmmc plan on one layer; returns (case, row, error): row with M, K, nnz, the groups of
    8 vectors of 8-row and (when the plan has M1 = 16) 16-row windows, and f8 / f16."""
    label, cls, matrix, n, read = case
    cmd = [spmmc, "plan", matrix, "--n", str(n), "--reorder", "grow", "--json", "--th-row", "100",
           "--th-col", "1"] + read
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return case, None, f"exit {p.returncode}: {p.stderr.strip()[-300:]}"
    try:
        j = json.loads(p.stdout)
    except json.JSONDecodeError as e:
        return case, None, f"bad JSON: {e}"
    per_m1 = {r["m1"]: r for r in j.get("reordering", [])}
    if 8 not in per_m1:
        return case, None, "M1 = 8 not in the plan's reordering"
    m, k, nnz = j["matrix"]["rows"], j["matrix"]["cols"], j["matrix"]["nnz"]
    g8 = per_m1[8]["after"]["vector_groups_of_8"]
    g16 = per_m1[16]["after"]["vector_groups_of_8"] if 16 in per_m1 else None
    row = {"label": label, "class": cls, "matrix": os.path.relpath(matrix, ROOT), "n": n, "M": m, "K": k,
           "nnz": nnz, "sparsity": 1 - nnz / (m * k), "groups8": g8, "groups16": g16,
           "f8": g8 * 8 * 8 / (m * k), "f16": g16 * 16 * 8 / (m * k) if g16 is not None else None,
           "nnz_per_group8": nnz / g8 if g8 else None, "nnz_per_group16": nnz / g16 if g16 else None,
           "grow_seconds_m1_8": per_m1[8].get("seconds")}
    return case, row, ""


def shown(path):
    """A path as printed: relative to the repository root when it lies under it."""
    rel = os.path.relpath(path, ROOT)
    return os.path.abspath(path) if rel.startswith("..") else rel


def band_of(sparsity):
    """The name of the sparsity band a layer falls in."""
    return next(name for name, lo, hi in BANDS if lo <= sparsity < hi)


def geomean(xs):
    """Geometric mean of positive numbers."""
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def summary_cells(rows, ratio):
    """The table cells of a group of layers (class or all)."""
    f8 = [r["f8"] for r in rows]
    f16 = [r["f16"] for r in rows if r["f16"] is not None]
    med8, gm8 = statistics.median(f8), geomean(f8)
    cells = [str(len(rows)), f"{statistics.median(r['sparsity'] for r in rows):.3f}",
             f"{statistics.median(r['nnz_per_group8'] for r in rows):.1f}",
             f"{med8:.3f}", f"{gm8:.3f}", f"{min(f8):.3f}-{max(f8):.3f}"]
    if f16:
        cells += [f"{statistics.median(f16):.3f}",
                  f"{statistics.median(r['nnz_per_group16'] for r in rows if r['nnz_per_group16']):.1f}"]
    else:
        cells += ["-", "-"]
    cells += [f"{ratio / med8:.2f}x", f"{ratio / gm8:.2f}x", f"{ratio / min(f8):.2f}x"]
    if f16:
        cells.append(f"{ratio / statistics.median(f16):.2f}x")
    else:
        cells.append("-")
    return cells


def print_tables(rows, ratio):
    """One Markdown table per sparsity band: a row per class and one for all the band's layers."""
    header = ("| class | layers | median sparsity | nnz per 8x8 block (median) | f8 median | f8 geomean | f8 range "
              "| f16 median | nnz per 16x8 block (median) | bound x HGEMM at median f8 | at geomean f8 "
              "| best layer (min f8) | at median f16 |")
    for name, _, _ in BANDS:
        band = [r for r in rows if r["band"] == name]
        if not band:
            continue
        print(f"### Sparsity {name} ({len(band)} layers)\n")
        print(header)
        print("|---|" + "--:|" * 12)
        for _, cls in CLASSES:
            sub = [r for r in band if r["class"] == cls]
            if sub:
                print(f"| {cls} | " + " | ".join(summary_cells(sub, ratio)) + " |")
        print("| **all** | " + " | ".join(summary_cells(band, ratio)) + " |")
        print()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=os.path.join(ROOT, "scripts/studies/all-fp16.cases"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--mma-ratio", type=float, default=1.0)
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    if a.jobs < 1 or a.mma_ratio <= 0:
        ap.error("--jobs takes a positive integer, --mma-ratio a positive number")
    spmmc = os.path.join(ROOT, os.environ.get("SPMMC_BUILD_DIR", "build-tuner"), "spmmc")
    if not os.access(spmmc, os.X_OK):
        print(f"tc-bound: no spmmc at {spmmc} (set SPMMC_BUILD_DIR)", file=sys.stderr)
        return 66
    cases = read_cases(a.cases)

    print("# Tensor-core MMA work against the dense GEMM (issue 26)\n")
    print(f"`{' '.join(shlex.quote(w) for w in [os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:])}` — "
          f"{datetime.datetime.now().astimezone().isoformat(timespec='seconds')}; spmmc {shown(spmmc)}; "
          f"{len(cases)} DNN layers of {shown(a.cases)}; R = {a.mma_ratio:g}\n")

    rows, failed = [], []
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for case, row, err in pool.map(lambda c: plan_layer(spmmc, c), cases):
            if row is None:
                failed.append(case[0])
                print(f"tc-bound: {case[0]}: {err}", file=sys.stderr)
                continue
            row["band"] = band_of(row["sparsity"])
            rows.append(row)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"mma_ratio": a.mma_ratio, "cases": shown(a.cases), "layers": rows}, f, indent=1)

    has16 = all(r["f16"] is not None for r in rows)
    print("f8 = groups of 8 vectors of 8-row windows x 64 / (M K): the sparse kernel's MMA work (8x8 blocks of A "
          "multiplied densely) as a fraction of the dense GEMM's; f16 the same for 16-row windows (16x8 blocks)"
          + ("" if has16 else "; '-' where the plan has no M1 = 16") + ". Rows grown for few columns "
          "(`spmmc plan --reorder grow`, per M1). Bound x HGEMM = R / f: the best ratio to the dense GEMM of a "
          f"sparse kernel with zero overhead whose mma.sync ran at R = {a.mma_ratio:g} times the dense GEMM's "
          "achieved tensor throughput.\n")
    print_tables(rows, a.mma_ratio)
    if rows:
        hi = [r for r in rows if r["sparsity"] >= 0.895]
        parts = [f"{len(rows)} layers ({len(failed)} failed)",
                 f"geomean f8 {geomean([r['f8'] for r in rows]):.3f}"]
        if hi:
            parts.append(f"at sparsity >= 0.9: geomean f8 {geomean([r['f8'] for r in hi]):.3f}, "
                         f"bound {a.mma_ratio / geomean([r['f8'] for r in hi]):.2f}x HGEMM at R = {a.mma_ratio:g}")
        print("tc-bound: " + "; ".join(parts))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
