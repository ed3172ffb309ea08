#!/usr/bin/env python3
"""Geomeans of kernel-study tables, merged: the later table's row replaces an earlier one of the
same case (a layer re-timed after a change of the default).

usage: scripts/studies/geomeans.py [--table] CASES TABLE.md [TABLE.md ...]
  --table   also print the merged table, one row per layer of CASES (untimed ones marked), with
            the TABLE.md each row comes from
  CASES     a kernel-study cases file (LABEL|MATRIX|N|FLAGS): the layers that count, and where to
            read each matrix's shape for its sparsity (1 - nnz / (M K))
  TABLE.md  kernel-study's Markdown output (or a document holding its table rows)
Prints, over the timed layers of CASES: the geomean of x best peer (cuSPARSE best-of and Sputnik)
and of x SGEMM (x the dense GEMM of the case's dtype: HGEMM for fp16) by family (tr_, rn_, mbnet_,
graph_ label prefixes) and, over the DNN layers, sparsity band, the layers below
0.8x the best peer, and the cases of CASES with no timed row.
"""
import math
import os
import struct
import sys


def shape_of(path):
    """(M, K) of a .smtx (first line 'M, K, nnz'), a Matrix Market file (its size line) or a 2-D .npy
    (header only)."""
    if path.endswith(".mtx"):
        with open(path) as f:
            for line in f:
                if not line.startswith("%") and line.strip():
                    m, k = [int(x) for x in line.split()[:2]]
                    return m, k
    if path.endswith(".smtx"):
        with open(path) as f:
            m, k = [int(x) for x in f.readline().split(",")[:2]]
        return m, k
    with open(path, "rb") as f:
        magic = f.read(8)
        if magic[:6] != b"\x93NUMPY":
            raise SystemExit(f"{path}: not a .npy file")
        size = struct.unpack("<H", f.read(2))[0] if magic[6] == 1 else struct.unpack("<I", f.read(4))[0]
        header = f.read(size).decode("latin1")
    dims = header.split("'shape':")[1].split("(")[1].split(")")[0]
    m, k = [int(x) for x in dims.split(",") if x.strip()][:2]
    return m, k


def read_rows(paths):
    rows = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if len(cells) < 14 or cells[-1] not in ("PASS", "FAIL"):
                    continue
                try:
                    rows[cells[0]] = {"nnz": int(cells[1]), "n": int(cells[2]), "tile": cells[3],
                                      "nvcc": cells[4], "tflops": float(cells[9]), "peer": float(cells[10]),
                                      "sgemm": float(cells[11]) if cells[11] != "-" else None,
                                      "source": os.path.basename(path)}
                except ValueError:
                    continue
    return rows


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main():
    args = sys.argv[1:]
    table = args[:1] == ["--table"]
    if table:
        args = args[1:]
    if len(args) < 2:
        raise SystemExit(__doc__)
    root = os.path.dirname(os.path.abspath(args[0]))
    cases = []
    with open(args[0]) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            label, matrix = line.split("|")[:2]
            cases.append((label, matrix))
    rows = read_rows(args[1:])
    timed, missing = [], []
    for label, matrix in cases:
        if label not in rows:
            missing.append(label)
            continue
        path = matrix if os.path.exists(matrix) else os.path.join(root, "..", "..", matrix)
        m, k = shape_of(path)
        r = dict(rows[label], label=label, sparsity=1.0 - rows[label]["nnz"] / (m * k))
        timed.append(r)
    print(f"{len(timed)} of {len(cases)} layers timed")

    def line(name, group):
        if group:
            dense = [r["sgemm"] for r in group if r["sgemm"] is not None]  # "-": the dense GEMM was not timed
            print(f"  {name:28s} {len(group):3d} layers  x best peer {geomean([r['peer'] for r in group]):.2f}"
                  f"  x SGEMM {geomean(dense):.2f}" + (f" ({len(dense)} timed)" if len(dense) < len(group) else ""))

    line("all", timed)
    for prefix in ("tr_", "rn_", "mbnet_", "graph_"):
        line(prefix + "*", [r for r in timed if r["label"].startswith(prefix)])
    dnn = [r for r in timed if not r["label"].startswith("graph_")]
    line("DNN sparsity >= 0.95", [r for r in dnn if r["sparsity"] >= 0.945])
    line("DNN sparsity >= 0.9", [r for r in dnn if r["sparsity"] >= 0.895])
    line("DNN sparsity 0.9-0.95", [r for r in dnn if 0.895 <= r["sparsity"] < 0.945])
    line("DNN sparsity 0.7-0.8", [r for r in dnn if 0.695 <= r["sparsity"] < 0.85])
    line("DNN sparsity < 0.7", [r for r in dnn if r["sparsity"] < 0.695])
    low = sorted((r for r in timed if r["peer"] < 0.8), key=lambda r: r["peer"])
    print(f"below 0.8x the best peer: {len(low)}")
    for r in low:
        print(f"  {r['peer']:.2f}  {r['label']} (n = {r['n']}, nnz {r['nnz']}, tile {r['tile']})")
    if missing:
        print(f"not timed: {len(missing)}")
        for label in missing:
            print(f"  {label}")
    if table:
        by_label = {r["label"]: r for r in timed}
        print("\n| layer | sparsity | nnz | n | tile | nvcc s | TFLOP/s | x best peer | x SGEMM | from |")
        print("|---|--:|--:|--:|---|--:|--:|--:|--:|---|")
        for label, _ in cases:
            r = by_label.get(label)
            if r is None:
                print(f"| {label} | | | | | | | | | not timed |")
                continue
            print(f"| {label} | {r['sparsity']:.2f} | {r['nnz']} | {r['n']} | {r['tile']} | {r['nvcc']} | {r['tflops']:.2f} | "
                  f"{r['peer']:.2f} | {'-' if r['sgemm'] is None else format(r['sgemm'], '.2f')} | {r['source']} |")


if __name__ == "__main__":
    main()
