#!/usr/bin/env python3
"""The proxy validation study of LO-SpMM §5 / §7.3, on the GPU at hand.

For every matrix of the study set it runs
    spmmc compile FILE --n N --tune exhaustive --no-cache --max-candidates K
which times, for the same candidates, the proxy (LO-SpMM §5) and the real kernel (compiled with
NVRTC, checked against float64). From NAME.json it computes, per matrix: candidates measured,
Spearman rank correlation of proxy vs real medians, top-1 hit (the proxy's pick is the real
best), performance loss of the proxy's pick (real time of the pick / best real time - 1), the
proxy search time (planning + proxy build, compile and timing, all cold) and the exhaustive
search time (planning + real emit, compile, check and timing, cold).

From the same measurements it computes the loss of --tune proxy with K finalists (the fastest real
kernel among the K candidates with the fastest proxies) for K = 1, 2, 3, 5.

Then it times the search target: a 512x512 layer at sparsity 0.9, n = 4096, with --tune proxy
(cold cache, the default finalists), and the nvcc time of the file it emits; with
--target-exhaustive also --tune exhaustive over the same candidates, and the proxy pick's loss.

usage: scripts/proxy-study.py [--data DIR] [--out DIR] [--n N] [--max-candidates K] [--jobs J]
                              [--filter REGEX] [--skip-target | --target-only] [--target-exhaustive]
Prints a Markdown table and a summary (last) on stdout; writes OUT/study.json.
Exit 69 when no GPU is usable (spmmc says so), 1 when a run failed.
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

# The study set: shared DLMC files small enough for exhaustive search (shapes 64x256 .. 512x512,
# sparsity 0.7-0.98, magnitude and random pruning), MobileNet weights with real values, and
# generated matrices of other structure.
DLMC = [
    "rn50/magnitude_pruning/0.7/bottleneck_1_block_group1_1_1.smtx",
    "rn50/magnitude_pruning/0.8/bottleneck_1_block_group1_1_1.smtx",
    "rn50/magnitude_pruning/0.8/bottleneck_2_block_group1_1_1.smtx",
    "rn50/magnitude_pruning/0.9/bottleneck_1_block_group1_1_1.smtx",
    "rn50/magnitude_pruning/0.9/bottleneck_2_block_group1_1_1.smtx",
    "rn50/magnitude_pruning/0.9/bottleneck_3_block_group2_1_1.smtx",
    "rn50/magnitude_pruning/0.95/bottleneck_1_block_group1_1_1.smtx",
    "rn50/magnitude_pruning/0.95/bottleneck_2_block_group2_1_1.smtx",
    "rn50/magnitude_pruning/0.95/bottleneck_3_block_group2_1_1.smtx",
    "rn50/magnitude_pruning/0.98/bottleneck_2_block_group2_1_1.smtx",
    "rn50/magnitude_pruning/0.98/bottleneck_1_block_group3_1_1.smtx",
    "rn50/random_pruning/0.9/bottleneck_1_block_group1_1_1.smtx",
    "rn50/random_pruning/0.9/bottleneck_2_block_group1_1_1.smtx",
    "rn50/random_pruning/0.9/bottleneck_3_block_group2_1_1.smtx",
    "transformer/magnitude_pruning/0.98/body_encoder_layer_0_self_attention_multihead_attention_q_fully_connected.smtx",
    "transformer/magnitude_pruning/0.98/body_encoder_layer_0_self_attention_multihead_attention_k_fully_connected.smtx",
]
MOBILENET = ["contraction_1x1_0.npy", "contraction_1x1_1.npy", "contraction_1x1_2.npy"]
GENERATED = [  # name, spmmc gen arguments
    ("gen-uniform-384x256-0.95", ["uniform", "--rows", "384", "--cols", "256", "--sparsity", "0.95", "--seed", "1"]),
    ("gen-patterns-256x512-0.97", ["patterns", "--rows", "256", "--cols", "512", "--sparsity", "0.97", "--seed", "2"]),
    ("gen-blocks-256x256-0.9", ["blocks", "--rows", "256", "--cols", "256", "--sparsity", "0.9", "--seed", "3"]),
]
FINALISTS = (1, 2, 3, 5)
TARGET = "transformer/magnitude_pruning/0.9/body_encoder_layer_0_self_attention_multihead_attention_q_fully_connected.smtx"


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):  # average ranks over ties
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0
        i = j + 1
    return r


def spearman(x, y):
    if len(x) < 3:
        return float("nan")
    rx, ry = ranks(x), ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = math.sqrt(sum((a - mx) ** 2 for a in rx))
    syy = math.sqrt(sum((b - my) ** 2 for b in ry))
    return sxy / (sxx * syy) if sxx > 0 and syy > 0 else float("nan")


def run(cmd, **kw):
    start = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    return p, time.monotonic() - start


def analyse(report):
    t = report["tuning"]
    s = t["seconds"]
    plan = report.get("seconds", {}).get("plan", 0.0)
    both = [c for c in t["candidates"] if c["proxy"]["outcome"] == "Ok" and c["real"]["outcome"] == "Ok"]
    outcomes = {}
    for c in t["candidates"]:
        outcomes[c["real"]["outcome"]] = outcomes.get(c["real"]["outcome"], 0) + 1
    row = {"candidates": len(t["candidates"]), "measured": len(both), "real_outcomes": outcomes,
           "proxies": t["proxies_compiled"],
           "proxy_search_s": plan + s.get("proxy_build", 0) + s.get("proxy_compile", 0) + s.get("proxy_time", 0),
           "exhaustive_s": plan + s.get("real_emit", 0) + s.get("real_compile", 0) + s.get("real_check_and_time", 0)}
    if not both:
        return row
    p = [c["proxy"]["ms"]["median"] for c in both]
    r = [c["real"]["ms"]["median"] for c in both]
    pick = min(range(len(both)), key=lambda i: p[i])
    best = min(r)
    row.update({"spearman": spearman(p, r), "hit": r[pick] == best, "loss": r[pick] / best - 1.0,
                "pick": f'{both[pick]["m1"]}x{both[pick]["n1"]}',
                "best": f'{both[r.index(best)]["m1"]}x{both[r.index(best)]["n1"]}',
                "best_ms": best, "pick_ms": r[pick]})
    # --tune proxy with K finalists (docs/design/proxies.md): the fastest real kernel among the K
    # candidates with the fastest proxies, computed from the same measurements.
    by_proxy = sorted(range(len(both)), key=lambda i: p[i])
    row["finalist_loss"] = {k: min(r[i] for i in by_proxy[:k]) / best - 1.0 for k in FINALISTS}
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.environ.get("SPMMC_SHARED_DATA", os.path.join(ROOT, "..", "shared", "data")))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "proxy-study"))
    ap.add_argument("--spmmc", default=os.path.join(ROOT, os.environ.get("SPMMC_BUILD_DIR", "build"), "spmmc"))
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--max-candidates", type=int, default=40)
    ap.add_argument("--jobs", type=int, default=0)
    ap.add_argument("--filter", default="")
    ap.add_argument("--skip-target", action="store_true", help="leave out the 512x512 search-time target")
    ap.add_argument("--target-only", action="store_true", help="run only the search-time target")
    ap.add_argument("--target-exhaustive", action="store_true",
                    help="also search the target with --tune exhaustive over every survivor (the 10x reference)")
    ap.add_argument("--target-budget", type=float, default=3600.0, help="--tune-budget of that exhaustive search")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    jobs = ["--jobs", str(a.jobs)] if a.jobs else []

    cases = []
    for f in DLMC:
        cases.append(("dlmc/" + f.replace(".smtx", "").replace("/", "-"), os.path.join(a.data, "dlmc", f)))
    for f in MOBILENET:
        cases.append(("mobilenet-" + f.replace(".npy", ""), os.path.join(a.data, "weights", "mobilenet", f)))
    for name, gen in GENERATED:
        path = os.path.join(a.out, name + ".mtx")
        if not os.path.exists(path):
            p, _ = run([a.spmmc, "gen"] + gen + ["-o", path])
            if p.returncode != 0:
                sys.exit(f"proxy-study: spmmc gen failed: {p.stderr}")
        cases.append((name, path))
    cases = [c for c in cases if re.search(a.filter, c[0]) and not a.target_only]

    rows, failed = [], 0
    for i, (name, path) in enumerate(cases):
        if not os.path.exists(path):
            print(f"proxy-study: skipping {name}: {path} is absent", file=sys.stderr)
            continue
        out = os.path.join(a.out, f"case{i}")
        cmd = [a.spmmc, "compile", path, "--n", str(a.n), "--name", "study", "-o", out, "--tune", "exhaustive",
               "--no-cache", "--max-candidates", str(a.max_candidates), "--quiet"] + jobs
        p, wall = run(cmd)
        if p.returncode == 69:
            print(p.stderr, file=sys.stderr)
            sys.exit(69)
        if p.returncode != 0:
            print(f"proxy-study: {name}: exit {p.returncode}: {p.stderr.strip()[-2000:]}", file=sys.stderr)
            failed += 1
            continue
        report = json.load(open(os.path.join(out, "study.json")))
        row = analyse(report)
        row.update({"name": name, "nnz": report["input"]["nnz"], "shape": f'{report["input"]["rows"]}x{report["input"]["cols"]}',
                    "sparsity": report["input"]["sparsity"], "wall_s": wall})
        rows.append(row)
        json.dump({"n": a.n, "max_candidates": a.max_candidates, "rows": rows}, open(os.path.join(a.out, "study.json"), "w"), indent=1)
        print(f"proxy-study: {name}: {row.get('measured')} measured, rho {row.get('spearman', float('nan')):.3f}, "
              f"loss {100 * row.get('loss', float('nan')):.2f}%, {wall:.1f} s", file=sys.stderr)

    target = None
    if not a.skip_target:
        path = os.path.join(a.data, "dlmc", TARGET)
        if os.path.exists(path):
            out = os.path.join(a.out, "target")
            p, wall = run([a.spmmc, "compile", path, "--n", "4096", "--name", "target", "-o", out, "--tune", "proxy",
                           "--no-cache", "--max-compile-seconds", "100000", "--quiet"] + jobs)
            if p.returncode == 0:
                rep = json.load(open(os.path.join(out, "target.json")))
                nvcc = os.environ.get("NVCC", "nvcc")
                # Built as spmmc advises: with the options file it wrote (-Xptxas -O1 for the unrolled family).
                q, nvcc_s = run(["timeout", os.environ.get("SPMMC_NVCC_TIMEOUT", "420"), nvcc, "-O3", "-arch=sm_90",
                                 "--options-file", os.path.join(out, "target.nvcc-options"),
                                 "-cubin", os.path.join(out, "target.cu"), "-o", os.path.join(out, "target.cubin")])
                target = {"file": TARGET, "nnz": rep["input"]["nnz"], "search_s": wall,
                          "tile": f'{rep["choice"]["m1"]}x{rep["choice"]["n1"]}',
                          "candidates": len(rep["tuning"]["candidates"]), "stage_seconds": rep.get("seconds", {}),
                          "tuning_seconds": rep["tuning"]["seconds"],
                          "nvcc_s": nvcc_s if q.returncode == 0 else None, "nvcc_exit": q.returncode}
            else:
                print(f"proxy-study: target search failed: {p.stderr}", file=sys.stderr)
                failed += 1
            if target and a.target_exhaustive:
                p, wall = run([a.spmmc, "compile", path, "--n", "4096", "--name", "target", "-o", out + "-exhaustive",
                               "--tune", "exhaustive", "--tune-budget", str(a.target_budget), "--no-cache",
                               "--max-compile-seconds", "100000", "--quiet"] + jobs)
                if p.returncode == 0:
                    rep = json.load(open(os.path.join(out + "-exhaustive", "target.json")))
                    target.update({"exhaustive_s": wall, "exhaustive_tile": f'{rep["choice"]["m1"]}x{rep["choice"]["n1"]}'})
                    real = {f'{c["m1"]}x{c["n1"]}': c["real"]["ms"]["median"] for c in rep["tuning"]["candidates"]
                            if c["real"]["outcome"] == "Ok"}
                    if real and target["tile"] in real:
                        target["loss"] = real[target["tile"]] / min(real.values()) - 1.0
                else:
                    print(f"proxy-study: exhaustive target search failed: {p.stderr}", file=sys.stderr)
                    failed += 1

    json.dump({"n": a.n, "max_candidates": a.max_candidates, "rows": rows, "target": target},
              open(os.path.join(a.out, "study.json"), "w"), indent=1)
    print("| matrix | shape | sparsity | nnz | candidates | proxies | Spearman | top-1 | loss % | pick / best | proxy search s | exhaustive s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f'| {r["name"]} | {r["shape"]} | {r["sparsity"]:.3f} | {r["nnz"]} | {r["measured"]}/{r["candidates"]} | '
              f'{r["proxies"]} | {r.get("spearman", float("nan")):.3f} | {"yes" if r.get("hit") else "no"} | '
              f'{100 * r.get("loss", float("nan")):.2f} | {r.get("pick", "-")} / {r.get("best", "-")} | '
              f'{r["proxy_search_s"]:.2f} | {r["exhaustive_s"]:.1f} |')
    ok = [r for r in rows if "loss" in r]
    if target:
        print(f'\nTarget: {target["file"]} ({target["nnz"]} nnz), n=4096, --tune proxy over {target["candidates"]} '
              f'candidates: {target["search_s"]:.1f} s (tile {target["tile"]}); nvcc of the emitted file: '
              f'{target["nvcc_s"] if target["nvcc_s"] is not None else "exit %d" % target["nvcc_exit"]} s')
        if "exhaustive_s" in target:
            print(f'Target, --tune exhaustive over the same candidates: {target["exhaustive_s"]:.1f} s (tile '
                  f'{target["exhaustive_tile"]}), {target["exhaustive_s"] / target["search_s"]:.1f}x the proxy search; '
                  f'the proxy pick loses {100 * target.get("loss", float("nan")):.2f}% against the best real kernel')
    if ok:
        rho = [r["spearman"] for r in ok if not math.isnan(r["spearman"])]
        ps, es = sum(r["proxy_search_s"] for r in ok), sum(r["exhaustive_s"] for r in ok)
        print(f"\nSUMMARY: {len(ok)} matrices; mean loss {100 * sum(r['loss'] for r in ok) / len(ok):.2f}% "
              f"(max {100 * max(r['loss'] for r in ok):.2f}%); top-1 {sum(1 for r in ok if r['hit'])}/{len(ok)}; "
              f"mean Spearman {sum(rho) / max(1, len(rho)):.3f}; proxy search {ps:.1f} s vs exhaustive {es:.1f} s "
              f"({es / ps:.1f}x); failed runs {failed}")
        print("with K finalists (the fastest real kernel of the K fastest proxies): " + "; ".join(
            f"K = {k}: mean loss {100 * sum(r['finalist_loss'][k] for r in ok) / len(ok):.2f}% "
            f"(max {100 * max(r['finalist_loss'][k] for r in ok):.2f}%)" for k in FINALISTS))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
