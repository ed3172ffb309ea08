#!/usr/bin/env python3
"""How far a batch study's kernels are from a simple limit (issue 27: "measure each against its
predicted limit"). For every (case, n) of spmmc-gpu-bench's JSON lines (scripts/batch-study.sh's
results.jsonl), the limit of C = A * B on the GPU is

    floor + max(bytes / bandwidth, 2 * nnz * n / fma_peak)

with bytes = 8 * nnz (A's column indices and values, read once) + 4 * K * n (B, read once: the bench
flushes L2 before each run) + 4 * M * n (C, written once), and the floor an empty kernel's launch as the
bench times it (CUDA events around one launch). The defaults are the H100 figures measured for this
project: an empty kernel 3.14 us (docs/benchmarks.md, *Every batch size*, the launch floor), a
device-to-device copy 2980 GB/s and the FP32 FMA peak 67 TFLOP/s (../shared/docs/design.md).

Prints, per n, the geomean over the cases of limit / time (1.0: at the limit) for spmmc's kernel and for
the best peer, then the share of the limit each term takes (floor, memory, FMAs) at that n; with
--cases, one line per (case, n).

usage: scripts/studies/limits.py RESULTS.jsonl [RESULTS.jsonl ...] [--floor-us F] [--gbps G] [--tflops T] [--cases]
"""
import argparse
import sys

from bench_results import geomean, read_records


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results", nargs="+", help="spmmc-gpu-bench JSON lines (results.jsonl)")
    p.add_argument("--floor-us", type=float, default=3.14, help="an empty kernel's time as the bench measures it (us)")
    p.add_argument("--gbps", type=float, default=2980.0, help="memory bandwidth, GB/s (bytes read + written)")
    p.add_argument("--tflops", type=float, default=67.0, help="FP32 FMA peak, TFLOP/s")
    p.add_argument("--cases", action="store_true", help="one line per (case, n)")
    args = p.parse_args()

    rows = {}  # (label, n) -> the last passing record
    for r in read_records(args.results, "limits.py"):
        if not r.get("pass") or r.get("spmmc_ms") is None or not r.get("nnz"):
            continue
        label = str(r.get("label") or r.get("name")).rpartition("@")[0] or str(r.get("name"))
        rows[(label, int(r["n"]))] = r
    if not rows:
        sys.exit("limits.py: no passing results in the files given")

    def limit_us(r):
        n, nnz, m, k = r["n"], r["nnz"], r["M"], r["K"]
        mem = (8.0 * nnz + 4.0 * k * n + 4.0 * m * n) / (args.gbps * 1e9) * 1e6
        fma = 2.0 * nnz * n / (args.tflops * 1e12) * 1e6
        return args.floor_us + max(mem, fma), mem, fma

    by_n = {}
    if args.cases:
        print("| case | n | limit us | spmmc us | limit / spmmc | best peer us | limit / peer |")
        print("|---|--:|--:|--:|--:|--:|--:|")
    for (label, n), r in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        lim, mem, fma = limit_us(r)
        ours = r["spmmc_ms"] * 1e3
        peer = r["best_peer_ms"] * 1e3 if r.get("best_peer_ms") else None
        by_n.setdefault(n, []).append((lim / ours, lim / peer if peer else None, args.floor_us / lim, mem / lim, fma / lim))
        if args.cases:
            peer_text = f"{peer:.1f} | {lim / peer:.2f}" if peer else "- | -"
            print(f"| {label} | {n} | {lim:.1f} | {ours:.1f} | {lim / ours:.2f} | {peer_text} |")
    if args.cases:
        print()
    print(f"limit = {args.floor_us} us + max(bytes / {args.gbps:.0f} GB/s, FMAs / {args.tflops:.0f} TFLOP/s)\n")
    print("| n | cases | limit / spmmc (geomean) | limit / best peer | floor's share of the limit | memory's | FMAs' |")
    print("|--:|--:|--:|--:|--:|--:|--:|")
    for n in sorted(by_n):
        xs = by_n[n]
        peers = [x[1] for x in xs if x[1]]
        print(f"| {n} | {len(xs)} | {geomean([x[0] for x in xs]):.2f} | {geomean(peers):.2f} | "
              f"{sum(x[2] for x in xs) / len(xs):.2f} | {sum(x[3] for x in xs) / len(xs):.2f} | {sum(x[4] for x in xs) / len(xs):.2f} |")


if __name__ == "__main__":
    main()
