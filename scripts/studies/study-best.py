#!/usr/bin/env python3
"""The fastest variant of each kind per case, from the Markdown that scripts/studies/csr-variants.sh prints
(its microbenchmarks' tables: `| variant | µs | × FIRST | × best cuSPARSE (ALG) | bit-equal | error |`).

usage: scripts/studies/study-best.py OUTPUT.md [KIND ...]
  KIND  a variant name's first word (`slice`, `slice+A`, ...); the fastest row of each per case. Without
        KINDs: every first word of the variants that are compared bit for bit (not cuSPARSE's).
Prints one Markdown table: per case the first variant's and the best cuSPARSE algorithm's µs, then per kind
its fastest variant, its µs and its speed × the first variant and × the best cuSPARSE algorithm; a case
marked FAILED in the output, or with a variant not bit-equal ("NO"), is named under the table. Then, per
kind, the geomeans of its speeds over the cases where it ran, and in how many it was faster than the first.
Exit: 0, 64 usage, 66 the file is absent or holds no table.
"""
import re
import sys

from bench_results import geomean


def read_cases(path):
    """[(label, rows, failed)]: rows [(variant, us, bit_equal)] in the table's order."""
    cases, label, rows, failed = [], None, [], False
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("### "):
                if label is not None:
                    cases.append((label, rows, failed))
                label, rows, failed = line[4:].strip(), [], False
            elif line.startswith("FAILED"):
                failed = True
            elif line.startswith("| ") and not line.startswith("| variant") and not line.startswith("|---"):
                cells = [c.strip() for c in line.strip("|").split("|")]
                if len(cells) >= 5:
                    try:
                        rows.append((cells[0], float(cells[1]), cells[4]))
                    except ValueError:
                        pass
    if label is not None:
        cases.append((label, rows, failed))
    return cases


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 64
    try:
        cases = read_cases(argv[1])
    except OSError as e:
        print(f"study-best: {argv[1]}: {e.strerror}", file=sys.stderr)
        return 66
    cases = [c for c in cases if c[1]]
    if not cases:
        print(f"study-best: {argv[1]}: no table", file=sys.stderr)
        return 66
    kinds = argv[2:]
    if not kinds:
        for _, rows, _ in cases:
            for name, _, equal in rows[1:]:
                kind = name.split()[0]
                if equal != "—" and kind not in kinds:
                    kinds.append(kind)
    header = "| case | first µs | best cuSPARSE µs |" + "".join(f" fastest {k} | µs | × first | × cuSPARSE |" for k in kinds)
    print(header)
    print("|---|--:|--:|" + "---|--:|--:|--:|" * len(kinds))
    speeds = {k: ([], []) for k in kinds}
    notes = []
    for label, rows, failed in cases:
        first_us = rows[0][1]
        peers = [us for name, us, equal in rows if equal == "—"]
        best_peer = min(peers) if peers else float("nan")
        line = f"| {label} | {first_us:.1f} | {best_peer:.1f} |"
        for k in kinds:
            mine = [(us, name) for name, us, equal in rows[1:] if name.split()[0] == k]
            if not mine:
                line += " — | | | |"
                continue
            us, name = min(mine)
            params = re.sub(r"\s*\(.*\)$", "", name[len(k):]).strip()
            line += f" {params} | {us:.1f} | {first_us / us:.2f} | {best_peer / us:.2f} |"
            speeds[k][0].append(first_us / us)
            if peers:
                speeds[k][1].append(best_peer / us)
        print(line)
        if failed:
            notes.append(f"{label}: FAILED (a variant disagreed or the case did not finish)")
        notes += [f"{label}: {name} not bit-equal to the first" for name, _, equal in rows if equal == "NO"]
    print()
    for k in kinds:
        first, peer = speeds[k]
        if first:
            print(f"{k}: geomean {geomean(first):.2f}× the first, {geomean(peer):.2f}× the best cuSPARSE, over {len(first)} "
                  f"cases; faster than the first in {sum(x > 1 for x in first)}")
    for note in notes:
        print(note)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
