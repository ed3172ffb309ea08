#!/usr/bin/env python3
"""How many of B's rows the warps of one block of the balanced family could share (issue 28), on the CPU.

For each matrix, the balanced family's schedule as codegen/families/balanced/balanced_schedule.cpp places it
(pieces of 64 products, 256 where a row has more than 2048; 16 warps a block, one piece each; a row's pieces in
one block) under three row orders, and per order:
  sharing  the distinct columns a block's pieces read, summed over blocks, per product: 1.0 where no two
           products of a block read the same row of B, lower where a block's rows could share them in L1
  balance  the products over the work of blocks that each wait for their longest piece (16 x the longest)
Orders: `longest` (the family's: rows longest first, A's order among equal lengths), `classes` (rows by
power-of-two class of their length, longest class first, A's order within a class) and `classes+median`
(within a class, by the row's median column, so that rows reading the same part of B neighbour).

usage: scripts/studies/block-sharing.py MATRIX...   (Matrix Market .mtx, general or symmetric, or spmmc's .smtx)
Prints one Markdown row per matrix. Pure Python: a 150 000-non-zero graph takes a few seconds.
"""
import math
import sys

from matrix_rows import read_rows

WARPS = 16


def schedule(cols, piece_length, key):
    slots = []
    for r in sorted(range(len(cols)), key=key):
        n = len(cols[r])
        pieces = 1 if n <= piece_length else min(WARPS, math.ceil(n / piece_length))
        if len(slots) % WARPS + pieces > WARPS:
            slots.extend([None] * (-len(slots) % WARPS))
        size = n if pieces == 1 else math.ceil(n / pieces)
        slots.extend((r, min(n, q * size), min(n, (q + 1) * size)) for q in range(pieces))
    slots.extend([None] * (-len(slots) % WARPS))
    return slots


def measure(cols, slots):
    distinct = products = work = 0
    for b in range(0, len(slots), WARPS):
        seen, longest = set(), 0
        for s in slots[b:b + WARPS]:
            if s is not None:
                r, lo, hi = s
                seen.update(cols[r][lo:hi])
                products += hi - lo
                longest = max(longest, hi - lo)
        distinct += len(seen)
        work += longest * WARPS
    return distinct / max(products, 1), products / max(work, 1)


def main(paths):
    if not paths or paths[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 64
    print("| matrix | rows | products | longest: sharing / balance | classes | classes+median |")
    print("|---|--:|--:|---|---|---|")
    for path in paths:
        try:
            _, cols = read_rows(path)
        except (OSError, ValueError, IndexError) as e:
            print(f"block-sharing: {path}: cannot read it ({e})", file=sys.stderr)
            return 66
        piece_length = 256 if max(map(len, cols), default=0) > 2048 else 64
        orders = [
            lambda r: (-len(cols[r]), r),
            lambda r: (-len(cols[r]).bit_length(), r),
            lambda r: (-len(cols[r]).bit_length(), cols[r][len(cols[r]) // 2] if cols[r] else 0, r),
        ]
        cells = ["{:.3f} / {:.2f}".format(*measure(cols, schedule(cols, piece_length, k))) for k in orders]
        print(f"| {path.rsplit('/', 1)[-1]} | {len(cols)} | {sum(map(len, cols))} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
