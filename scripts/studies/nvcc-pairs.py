#!/usr/bin/env python3
"""nvcc's time of pairs of builds of a kernel-study folder (scripts/kernel-study.sh --build-only): for
every LABEL_A with a LABEL_B beside it (A and B the two suffixes), both builds' seconds (DIR/LABEL/
nvcc.seconds) and their ratio, and the geomean of the ratios last. A build that failed or is missing is
shown and left out of the geomean.

usage: scripts/studies/nvcc-pairs.py DIR A B
"""
import math
import os
import sys


def seconds(path):
    try:
        if open(os.path.join(path, 'nvcc.rc')).read().strip() != '0':
            return None
        return float(open(os.path.join(path, 'nvcc.seconds')).read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    folder, a, b = sys.argv[1:]
    labels = sorted(d[:-len(a) - 1] for d in os.listdir(folder) if d.endswith('_' + a))
    print(f'| layer | nvcc s, {a} | nvcc s, {b} | {a} / {b} |')
    print('|---|--:|--:|--:|')
    logs = []
    for label in labels:
        sa, sb = seconds(os.path.join(folder, f'{label}_{a}')), seconds(os.path.join(folder, f'{label}_{b}'))
        ratio = sa / sb if sa and sb else None
        if ratio:
            logs.append(math.log(ratio))
        fmt = lambda x: f'{x:.1f}' if x is not None else '-'
        print(f'| {label} | {fmt(sa)} | {fmt(sb)} | {f"{ratio:.2f}" if ratio else "-"} |')
    if logs:
        print(f'| **geomean** ({len(logs)} pairs) | | | **{math.exp(sum(logs) / len(logs)):.2f}** |')


if __name__ == '__main__':
    main()
