#!/usr/bin/env python3
"""The ranker's held-out study (issue 12, docs/design/ranker.md): what --tune none (the heuristic),
--tune model, --tune rank and --tune proxy choose on problems whose every candidate was timed by `spmmc collect`.

For every problem (matrix, n) of the given database folders it runs
    spmmc compile MATRIX --n N --tune MODE --family unrolled --no-cache [--model MODEL]
for each MODE, reads the chosen tile from the report, and looks its real kernel's time up in the
database: the loss is that time over the problem's fastest real kernel, minus one; a hit is a loss
of zero. The search time is the report's planning plus choosing (model) or tuning (rank, proxy)
seconds, cold (--no-cache). Generated problems ("gen-KIND-MxK-sS-SEED") are regenerated with
`spmmc gen`; the others are read from --data. --tune model needs no GPU; rank and proxy do.

usage: scripts/ranker-study.py DB_DIR... --model MODEL [--modes none,model,rank,proxy] [--out DIR]
                               [--data DIR] [--spmmc PATH] [--jobs J] [--filter REGEX]
Prints a Markdown table and a summary (last) on stdout; writes OUT/study.json.
Exit 69 when a mode needs a GPU and none is usable, 1 when a run failed.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODE = re.compile(r"^(none|model|rank|proxy)(?:\+f(\d+))?$")
GENERATED = re.compile(r"^gen-(\w+)-(\d+)x(\d+)-s([0-9.]+)-(\d+)$")


def read_database(dirs):
    """{(matrix, n): {tile: ms or None}} from every .jsonl file under dirs (a later line wins), and
    {matrix: sparsity}, to check that the matrix compiled is the one measured."""
    problems, sparsity = {}, {}
    for d in dirs:
        for root, _, files in os.walk(d):
            for f in sorted(files):
                if not f.endswith(".jsonl"):
                    continue
                for line in open(os.path.join(root, f)):
                    if not line.strip():
                        continue
                    j = json.loads(line)
                    key = (j["matrix"], j["n"])
                    problems.setdefault(key, {})[j["tile"]] = j["ms"] if j["outcome"] == "Ok" else None
                    sparsity[j["matrix"]] = j["features"]["sparsity"]
    return problems, sparsity


def pct(loss, absent="-"):
    return absent if loss is None else f"{100 * loss:.1f}%"


def tile_label(choice):
    v = choice.get("cols_per_thread", 1)
    return f'{choice["m1"]}x{choice["n1"]}' + (f"x{v}" if v != 1 else "")


def matrix_path(matrix, a):
    m = GENERATED.match(matrix)
    if not m:
        return os.path.join(a.data, matrix)
    path = os.path.join(a.out, "matrices", matrix + ".mtx")
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        kind, rows, cols, sparsity, seed = m.groups()
        p = subprocess.run([a.spmmc, "gen", kind, "--rows", rows, "--cols", cols, "--sparsity", sparsity, "--seed", seed,
                            "--quiet", "-o", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            sys.exit(f"ranker-study: spmmc gen {matrix} failed: {p.stderr.strip()}")
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("db", nargs="+", help="database folders of held-out problems (spmmc collect --out)")
    ap.add_argument("--model", required=True)
    ap.add_argument("--modes", default="model,rank,proxy")
    ap.add_argument("--data", default=os.environ.get("SPMMC_SHARED_DATA", os.path.join(ROOT, "..", "shared", "data")))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "ranker-study"))
    ap.add_argument("--spmmc", default=os.path.join(ROOT, os.environ.get("SPMMC_BUILD_DIR", "build"), "spmmc"))
    ap.add_argument("--jobs", type=int, default=0)
    ap.add_argument("--filter", default="")
    a = ap.parse_args()
    modes = [m for m in a.modes.split(",") if m]
    for m in modes:
        if not MODE.match(m):
            sys.exit(f"ranker-study: unknown mode '{m}' (none, model, rank or proxy, the latter two with +fN for --finalists N)")
    os.makedirs(a.out, exist_ok=True)
    jobs = ["--jobs", str(a.jobs)] if a.jobs else []
    db, sparsity_of = read_database(a.db)
    if not db:
        sys.exit(f"ranker-study: no database lines under {' '.join(a.db)}")

    rows, failed = [], 0
    for (matrix, n), tiles in sorted(db.items()):
        if not re.search(a.filter, matrix):
            continue
        ok = {t: ms for t, ms in tiles.items() if ms is not None}
        if len(ok) < 2:
            continue
        path = matrix_path(matrix, a)
        if not os.path.exists(path):
            print(f"ranker-study: skipping {matrix}: {path} is absent", file=sys.stderr)
            continue
        best = min(ok.values())
        row = {"matrix": matrix, "n": n, "candidates": len(ok), "best_ms": best,
               "best": min(ok, key=ok.get), "modes": {}}
        for mode in modes:
            out = os.path.join(a.out, "runs", f"{len(rows)}-{mode}")
            tune, finalists = MODE.match(mode).groups()
            cmd = [a.spmmc, "compile", path, "--n", str(n), "--name", "study", "-o", out, "--tune", tune,
                   "--family", "unrolled", "--no-cache", "--quiet"] + jobs
            if tune not in ("proxy", "none"):
                cmd += ["--model", a.model]
            if finalists is not None:
                cmd += ["--finalists", finalists]
            start = time.monotonic()
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wall = time.monotonic() - start
            if p.returncode == 69:
                print(p.stderr, file=sys.stderr)
                sys.exit(69)
            if p.returncode != 0:
                print(f"ranker-study: {matrix} --tune {mode}: exit {p.returncode}: {p.stderr.strip()[-1500:]}", file=sys.stderr)
                failed += 1
                continue
            rep = json.load(open(os.path.join(out, "study.json")))
            sparsity = sparsity_of[matrix]
            if abs(rep["input"]["sparsity"] - sparsity) > 1e-9:
                sys.exit(f"ranker-study: {matrix}: the matrix compiled has sparsity {rep['input']['sparsity']}, the "
                         f"database's has {sparsity}: not the same matrix")
            s = rep.get("seconds", {})
            tile = tile_label(rep["choice"])
            ms = ok.get(tile)
            row["modes"][mode] = {"tile": tile, "ms": ms, "loss": None if ms is None else ms / best - 1.0,
                                  "search_s": s.get("plan", 0.0) + s.get("tune", s.get("choose", 0.0)), "wall_s": wall}
            if "tuning" in rep:  # the stages' seconds and every timed candidate, for offline reading
                t = rep["tuning"]
                row["modes"][mode]["tuning_seconds"] = t["seconds"]
                row["modes"][mode]["timed"] = [
                    {"tile": c.get("tile"), "proxy_ms": c["proxy"]["ms"]["median"] if c["proxy"]["outcome"] == "Ok" else None,
                     "real_ms": c["real"]["ms"]["median"] if c.get("real", {}).get("outcome") == "Ok" else None}
                    for c in t["candidates"]]
        rows.append(row)
        json.dump({"modes": modes, "model": a.model, "rows": rows}, open(os.path.join(a.out, "study.json"), "w"), indent=1)
        print(f"ranker-study: {matrix} n={n}: " + ", ".join(
            f"{m} {v['tile']} loss {pct(v['loss'])} "
            f"{v['search_s']:.1f} s" for m, v in row["modes"].items()), file=sys.stderr)

    print("| problem | n | candidates | best | " + " | ".join(f"{m}: tile, loss, search s" for m in modes) + " |")
    print("|---|--:|--:|---|" + "---|" * len(modes))
    for r in rows:
        cells = []
        for m in modes:
            v = r["modes"].get(m)
            cells.append("failed" if v is None else
                         f"{v['tile']}, {pct(v['loss'], 'not in the database')}, {v['search_s']:.1f}")
        print(f"| {r['matrix']} | {r['n']} | {r['candidates']} | {r['best']} | " + " | ".join(cells) + " |")
    print()
    for m in modes:
        losses = [r["modes"][m]["loss"] for r in rows if m in r["modes"] and r["modes"][m]["loss"] is not None]
        absent = sum(1 for r in rows if m in r["modes"] and r["modes"][m]["loss"] is None)
        search = [r["modes"][m]["search_s"] for r in rows if m in r["modes"]]
        if not losses:
            continue
        print(f"--tune {m}: {len(losses)} problems, mean loss {100 * sum(losses) / len(losses):.2f}% "
              f"(max {100 * max(losses):.1f}%), hits {sum(1 for x in losses if x == 0.0)}/{len(losses)}"
              + (f", {absent} choices not in the database" if absent else "")
              + f", search {sum(search):.1f} s in all (mean {sum(search) / len(search):.2f} s)")
    for rank in (m for m in modes if m.startswith("rank") and "proxy" in modes):
        pairs = [(r["modes"]["proxy"]["search_s"], r["modes"][rank]["search_s"]) for r in rows
                 if "proxy" in r["modes"] and rank in r["modes"] and r["modes"][rank]["search_s"] > 0]
        if pairs:
            geo = math.exp(sum(math.log(p / q) for p, q in pairs) / len(pairs))
            print(f"--tune {rank} searches {sum(p for p, _ in pairs) / sum(q for _, q in pairs):.2f}x faster than --tune "
                  f"proxy in all ({geo:.2f}x geometric mean over {len(pairs)} problems)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
