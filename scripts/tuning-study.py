#!/usr/bin/env python3
"""What each tuning mode gives a user against the heuristic (issue 25, docs/design/tuning.md).

For every case of kernel-study case files (LABEL|MATRIX|N|FLAGS) and every MODE of --modes it runs
    spmmc compile MATRIX --n N --name LABEL -o OUT/runs/LABEL.MODE --tune MODE [FLAGS]
and reads NAME.json: the tile and family emitted, the search's seconds (planning plus choosing or
tuning), and "versus_heuristic": whether the heuristic's pick was kept and, where a GPU timed them,
the heuristic's real kernel against the emitted one (the same process, CUDA events, L2 flushed,
median of the timed runs) and cuBLAS SGEMM. Modes: none and model run on the CPU, several at once
(--jobs); auto (the default: rank with a GPU of the target's architecture, none without), rank,
proxy and exhaustive run one at a time. A finished run (its NAME.json exists) is not run again, so a
study cut short by --budget resumes where it stopped.

usage: scripts/tuning-study.py CASES... [--modes none,model,auto] [--out DIR] [--spmmc PATH]
                               [--jobs J] [--budget S] [--filter REGEX] [--flags "EXTRA FLAGS"]
                               [--departures FILE]
--departures FILE writes a kernel-study case file (scripts/kernel-study.sh) of every case where a CPU
mode (model) emitted another kernel than --tune none: LABEL_none and LABEL_MODE, so that both are built
and timed side by side (a CPU mode's pick is timed nowhere else; the GPU modes time theirs in-process).
Prints a Markdown table (one row per case) and a summary (last) on stdout; writes OUT/study.json.
Exit 69 when a GPU mode finds no usable GPU, 1 when a run failed, 0 otherwise.
"""
import argparse
import concurrent.futures
import json
import math
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPU_MODES = {"none", "model"}
MODES = CPU_MODES | {"auto", "rank", "proxy", "exhaustive"}


def read_cases(files, pattern):
    cases = []
    for f in files:
        for line in open(f):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split("|")
            if len(parts) < 3:
                sys.exit(f"tuning-study: {f}: '{line}': expected LABEL|MATRIX|N|FLAGS")
            label, matrix, n = parts[0], parts[1], int(parts[2])
            flags = shlex.split(parts[3]) if len(parts) > 3 else []
            if re.search(pattern, label):
                cases.append({"label": label, "matrix": os.path.join(ROOT, matrix) if not os.path.isabs(matrix) else matrix,
                              "n": n, "flags": flags})
    return cases


def run(case, mode, a):
    """Runs one compile (or reads its earlier report); returns the row's entry for this mode."""
    out = os.path.join(a.out, "runs", f"{case['label']}.{mode}")
    report = os.path.join(out, case["label"] + ".json")
    if not os.path.exists(report):
        cmd = [a.spmmc, "compile", case["matrix"], "--n", str(case["n"]), "--name", case["label"], "-o", out,
               "--tune", mode, "--quiet"] + case["flags"] + shlex.split(a.flags)
        start = time.monotonic()
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode == 69:
            return {"error": p.stderr.strip(), "exit": 69}
        if p.returncode != 0:
            return {"error": p.stderr.strip()[-800:], "exit": p.returncode}
        with open(os.path.join(out, "wall.txt"), "w") as f:
            f.write(f"{time.monotonic() - start:.3f}\n")
    rep = json.load(open(report))
    choice = rep["choice"]
    v = choice.get("cols_per_thread", 1)
    tile = f'{choice["m1"]}x{choice["n1"]}' + (f"x{v}" if v != 1 else "")
    s = rep.get("seconds", {})
    entry = {"tile": tile, "family": choice["family"], "tune": rep["options"]["tune"],
             "search_s": s.get("plan", 0.0) + s.get("tune", s.get("choose", 0.0)), "nnz": rep["input"]["nnz"],
             "sparsity": rep["input"]["sparsity"]}
    vh = rep.get("versus_heuristic")
    if vh:
        entry.update({"kept": vh["kept"], "heuristic": vh["tile"] + ("" if vh["family"] == "unrolled" else " generic"),
                      "why": vh["why"]})
        for k in ("heuristic_ms", "emitted_ms", "speedup", "sgemm_ms"):
            if k in vh:
                entry[k] = vh[k]
    return entry


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def label_of(e):
    if "error" in e:
        return "not run" if e.get("exit") is None else "failed"
    return e["tile"] if e["family"] == "unrolled" else "generic"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cases", nargs="+")
    ap.add_argument("--modes", default="none,model,auto")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "tuning-study"))
    ap.add_argument("--spmmc", default=os.path.join(ROOT, os.environ.get("SPMMC_BUILD_DIR", "build"), "spmmc"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="CPU-mode compiles at once")
    ap.add_argument("--budget", type=float, default=0.0, help="seconds; GPU runs not started by then are skipped")
    ap.add_argument("--filter", default="", help="only cases whose label matches")
    ap.add_argument("--flags", default="", help="extra spmmc compile flags for every run")
    ap.add_argument("--departures", default="", help="write a kernel-study case file of the cases where a CPU "
                    "mode's kernel differs from --tune none's")
    a = ap.parse_args()
    modes = [m for m in a.modes.split(",") if m]
    for m in modes:
        if m not in MODES:
            sys.exit(f"tuning-study: unknown mode '{m}' (one of {', '.join(sorted(MODES))})")
    cases = read_cases(a.cases, a.filter)
    if not cases:
        sys.exit("tuning-study: no cases")
    missing = [c for c in cases if not os.path.exists(c["matrix"])]
    if missing:
        print(f"tuning-study: skipping {len(missing)} cases whose matrix is absent (e.g. {missing[0]['matrix']})",
              file=sys.stderr)
        cases = [c for c in cases if os.path.exists(c["matrix"])]
    start = time.monotonic()
    results = {c["label"]: {} for c in cases}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        futures = {pool.submit(run, c, m, a): (c["label"], m) for c in cases for m in modes if m in CPU_MODES}
        for f in concurrent.futures.as_completed(futures):
            label, m = futures[f]
            results[label][m] = f.result()
    for i, c in enumerate(cases):
        for m in modes:
            if m in CPU_MODES:
                continue
            if a.budget and time.monotonic() - start > a.budget:
                results[c["label"]][m] = {"error": "not run: --budget spent", "exit": None}
                continue
            print(f"tuning-study: {i + 1}/{len(cases)} {c['label']} --tune {m}", file=sys.stderr)
            e = run(c, m, a)
            if e.get("exit") == 69:
                print(e["error"], file=sys.stderr)
                sys.exit(69)
            results[c["label"]][m] = e

    # The table: per case, each mode's pick, and for the timed modes the heuristic's and the emitted kernel's times.
    head = ["case", "nnz", "n"] + [f"{m}" for m in modes]
    timed = [m for m in modes if m not in CPU_MODES]
    for m in timed:
        head += [f"{m}: heuristic ms", f"{m}: emitted ms", f"{m}: x heuristic", f"{m}: x SGEMM", f"{m}: search s"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * 3 + "---|" * len(modes) + "--:|" * (5 * len(timed)))
    failed = 0
    for c in cases:
        r = results[c["label"]]
        first = next((e for e in r.values() if "error" not in e), {})
        cells = [c["label"], str(first.get("nnz", "-")), str(c["n"])]
        for m in modes:
            e = r.get(m, {"error": "?"})
            failed += "error" in e and e.get("exit") is not None
            cells.append(label_of(e) + (" (kept)" if e.get("kept") and m != "none" else ""))
        for m in timed:
            e = r.get(m, {})
            fmt = lambda k: f"{e[k]:.4g}" if k in e else "-"
            sg = f"{e['sgemm_ms'] / e['emitted_ms']:.2f}" if "sgemm_ms" in e and "emitted_ms" in e else "-"
            cells += [fmt("heuristic_ms"), fmt("emitted_ms"), fmt("speedup"), sg,
                      f"{e['search_s']:.1f}" if "search_s" in e else "-"]
        print("| " + " | ".join(cells) + " |")

    print()
    lines = []
    for m in modes:
        es = [results[c["label"]].get(m, {}) for c in cases]
        ok = [e for e in es if "error" not in e]
        if m == "none":
            lines.append(f"none: {len(ok)} of {len(es)} compiled")
            continue
        kept = sum(1 for e in ok if e.get("kept"))
        same = sum(1 for c in cases if "error" not in results[c["label"]].get(m, {"error": 1}) and "none" in results[c["label"]]
                   and label_of(results[c["label"]][m]) == label_of(results[c["label"]]["none"]))
        line = f"{m}: {len(ok)} of {len(es)} compiled; heuristic's pick kept on {kept}"
        if "none" in modes:
            line += f", the same kernel as --tune none on {same}"
        sp = [e["speedup"] for e in ok if "speedup" in e]
        if sp:
            line += (f"; x heuristic (timed in the run) geomean {geomean(sp):.3f}, min {min(sp):.3f}, "
                     f"{sum(1 for x in sp if x > 1.0)} faster on {len(sp)} timed")
            sg = [e["sgemm_ms"] / e["emitted_ms"] for e in ok if "sgemm_ms" in e and "emitted_ms" in e]
            if sg:
                line += f"; x SGEMM geomean {geomean(sg):.2f}"
        ss = [e["search_s"] for e in ok]
        if ss:
            line += f"; search median {statistics.median(ss):.1f} s, max {max(ss):.1f} s"
        lines.append(line)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "study.json"), "w") as f:
        json.dump({"modes": modes, "cases": cases, "results": results}, f, indent=1)
    print("**Summary**: " + "; ".join(lines) + ".")
    if a.departures:
        write_departures(a.departures, cases, results, modes, a)
    return 1 if failed else 0


def write_departures(path, cases, results, modes, a):
    """The kernel-study cases of every (case, CPU mode) whose kernel is not --tune none's, with none's beside."""
    modes = [m for m in modes if m in CPU_MODES]
    out = [f"# Written by scripts/tuning-study.py --departures: the cases where a mode of {','.join(modes)} emitted",
           "# another kernel than --tune none; both built and timed by scripts/kernel-study.sh. LABEL|MATRIX|N|FLAGS"]
    for c in cases:
        r = results[c["label"]]
        if "error" in r.get("none", {"error": 1}):
            continue
        differs = [m for m in modes if m != "none" and "error" not in r.get(m, {"error": 1})
                   and label_of(r[m]) != label_of(r["none"])]
        if not differs:
            continue
        matrix = os.path.relpath(c["matrix"], ROOT)
        extra = " ".join(shlex.quote(f) for f in c["flags"] + shlex.split(a.flags))
        for m in ["none"] + differs:
            out.append(f"{c['label']}_{m}|{matrix}|{c['n']}|--tune {m} {extra}".rstrip())
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"tuning-study: {len(out) - 2} departure cases in {path}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
