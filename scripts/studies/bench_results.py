"""Reading spmmc-gpu-bench's JSON lines (scripts/batch-study.sh's results.jsonl) for the study scripts
beside this file (limits.py, variants.py): import bench_results."""
import json
import math
import sys


def geomean(xs):
    """The geometric mean of positive numbers; NaN for none."""
    xs = list(xs)
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def read_records(paths, program):
    """Every record of the files, in order; a line that is not JSON is reported on stderr as
    PROGRAM: FILE:LINE and skipped, a file that cannot be read ends the program with its error."""
    for path in paths:
        try:
            with open(path) as f:
                lines = f.read().splitlines()
        except OSError as e:
            sys.exit(f"{program}: {path}: {e.strerror}")
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except ValueError:
                print(f"{program}: {path}:{number}: not JSON, skipped", file=sys.stderr)
