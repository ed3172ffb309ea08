#!/usr/bin/env python3
"""Tables of a batch study whose case labels end in _VARIANT (LAYER_base, LAYER_v8, ...): the geomean of
x the best peer (spmmc's median against the best cuSPARSE algorithm's, or Sputnik's where it ran) per
variant and n, over all layers and by row-length class (A's mean products per row: at most 16, 17-64,
more than 64), and each variant's time against the first one's, layer by layer.

usage: scripts/studies/variants.py [--layers] RESULTS.jsonl VARIANT[,VARIANT...] [--against OTHER.jsonl VARIANT]
  --layers        also print one row per layer: x the best peer of every variant at every n, the fastest in bold
  RESULTS.jsonl   batch-study's results (scripts/studies/batch-on-gpu.sh leaves them in NAME.tar.xz)
  VARIANT,...     the label suffixes to compare, the first the base
  --against       also compare the first VARIANT of RESULTS with VARIANT of another call's results, each
                  time normalised by its own run's best peer (for studies split over calls)
Prints Markdown tables.
"""
import sys

from bench_results import geomean, read_records


def load(path):
    """{(layer, variant, n): (spmmc ms, best peer ms)} and {layer: (rows, non-zeros)} of a results file."""
    times, shapes = {}, {}
    for r in read_records([path], "variants.py"):
        if r.get("failure") or not r.get("spmmc_ms") or not r.get("best_peer_ms"):
            continue
        label, n = r["label"].rsplit("@", 1)
        layer, variant = label.rsplit("_", 1)
        times[(layer, variant, int(n))] = (r["spmmc_ms"], r["best_peer_ms"])
        shapes[layer] = (r["M"], r["nnz"])
    return times, shapes


def row_class(rows, nnz):
    mean = nnz / rows
    return "<= 16" if mean <= 16 else "17-64" if mean <= 64 else "> 64"


def print_table(first, ns, rows, cell, align="--:"):
    """A Markdown table: a first column headed `first` of the rows' labels, then one column per n;
    rows are (label, key) pairs and cell(key, n) is a cell's text."""
    print(f"| {first} | " + " | ".join(f"n = {n}" for n in ns) + " |")
    print("|---|" + f"{align}|" * len(ns))
    for label, key in rows:
        print(f"| {label} | " + " | ".join(cell(key, n) for n in ns) + " |")


def main(argv):
    per_layer = "--layers" in argv[1:]
    argv = [a for a in argv if a != "--layers"]
    if len(argv) not in (3, 6) or (len(argv) == 6 and argv[3] != "--against"):
        sys.exit(__doc__)
    times, shapes = load(argv[1])
    variants = argv[2].split(",")
    ns = sorted({n for (_, _, n) in times})
    layers = sorted(shapes)
    missing = [(l, v, n) for l in layers for v in variants for n in ns if (l, v, n) not in times]
    if missing:
        print(f"({len(missing)} (layer, variant, n) without a result, left out: e.g. {missing[0]})\n")
    done = [l for l in layers if all((l, v, n) in times for v in variants for n in ns)]

    def speed(l, v, n):
        ms, peer = times[(l, v, n)]
        return peer / ms

    print("geomean x best peer, all layers (" + str(len(done)) + ")\n")
    print_table("variant", ns, [(v, v) for v in variants], lambda v, n: f"{geomean([speed(l, v, n) for l in done]):.2f}")
    classes = ["<= 16", "17-64", "> 64"]
    counts = [sum(row_class(*shapes[l]) == c for l in done) for c in classes]
    print(f"\ngeomean x best peer by products per row ({' / '.join(f'{c}: {k}' for c, k in zip(classes, counts))} layers)\n")
    print_table("variant", ns, [(v, v) for v in variants], lambda v, n: " / ".join(
        f"{geomean([speed(l, v, n) for l in done if row_class(*shapes[l]) == c]):.2f}" for c in classes))
    base = variants[0]
    print(f"\neach variant's speed against {base} (its time / theirs): geomean [lowest-highest]\n")

    def against_base(v, n):
        r = [times[(l, base, n)][0] / times[(l, v, n)][0] for l in done]
        return f"{geomean(r):.3f} [{min(r):.2f}-{max(r):.2f}]"

    print_table("variant", ns, [(v, v) for v in variants[1:]], against_base)
    if per_layer:
        print(f"\nx best peer per layer ({' / '.join(variants)}; the fastest in bold)\n")

        def all_variants(l, n):
            x = [speed(l, v, n) for v in variants]
            return " / ".join(f"**{y:.2f}**" if y == max(x) else f"{y:.2f}" for y in x)

        print_table("layer (rows, non-zeros)", ns, [(f"{l} ({shapes[l][0]}, {shapes[l][1]})", l) for l in done],
                    all_variants, align="---")
    if len(argv) == 6:
        other, _ = load(argv[4])
        theirs = argv[5]
        print(f"\n{theirs} of {argv[4]} against {base}, each normalised by its run's best peer: geomean [lowest-highest]\n")
        print("| n | geomean | lowest | highest | below 0.95 |")
        print("|--:|--:|--:|--:|--:|")
        for n in ns:
            r = [speed_o / speed(l, base, n) for l in done if (l, theirs, n) in other
                 for speed_o in [other[(l, theirs, n)][1] / other[(l, theirs, n)][0]]]
            if r:
                print(f"| {n} | {geomean(r):.3f} | {min(r):.2f} | {max(r):.2f} | {sum(x < 0.95 for x in r)} of {len(r)} |")


if __name__ == "__main__":
    main(sys.argv)
