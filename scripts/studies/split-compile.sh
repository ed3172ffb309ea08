#!/usr/bin/env bash
# Builds emitted files to cubins twice, with NAME.nvcc-options less --split-compile and as written
# (--split-compile 0), and says per file the two nvcc wall times and whether every .text section
# (the machine code of each function) is byte-identical (docs/emitted-code.md, *Building*).
#
# usage: scripts/studies/split-compile.sh DIR/NAME.cu ...   (each beside its NAME.nvcc-options)
# Needs nvcc (NVCC, default on PATH), readelf and python3. Exit 1 where a file's machine code differs.
set -euo pipefail
[ $# -gt 0 ] && [ "${1:-}" != "-h" ] && [ "${1:-}" != "--help" ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 64; }
nvcc=${NVCC:-nvcc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
status=0
for cu in "$@"; do
  base=${cu%.cu} name=$(basename "${cu%.cu}")
  options=$(cat "$base.nvcc-options")
  without=${options/--split-compile 0/}
  t0=$(now)
  # shellcheck disable=SC2086  # the options file's words
  "$nvcc" -O3 -arch=sm_90 -cubin $without "$cu" -o "$work/$name.plain.cubin"
  t1=$(now)
  "$nvcc" -O3 -arch=sm_90 -cubin --options-file "$base.nvcc-options" "$cu" -o "$work/$name.split.cubin"
  t2=$(now)
  verdict=$(python3 - "$work/$name.plain.cubin" "$work/$name.split.cubin" <<'PY'
import hashlib, subprocess, sys
def texts(path):
    data = open(path, "rb").read()
    out = {}
    for line in subprocess.run(["readelf", "-S", "-W", path], capture_output=True, text=True, check=True).stdout.splitlines():
        line = line.strip()
        if not line.startswith("["):
            continue
        f = line.split("]", 1)[1].split()
        if len(f) > 4 and f[0].startswith(".text"):
            off, size = int(f[3], 16), int(f[4], 16)
            out[f[0]] = hashlib.sha256(data[off:off + size]).hexdigest()
    return out
a, b = texts(sys.argv[1]), texts(sys.argv[2])
same = sum(a[k] == b.get(k) for k in a)
print(f"{same}/{len(a)} .text identical" + ("" if same == len(a) == len(b) else " DIFFERENT"))
PY
)
  case $verdict in *DIFFERENT*) status=1 ;; esac
  awk -v n="$name" -v a="$t0" -v b="$t1" -v c="$t2" -v v="$verdict" 'BEGIN { printf "%s: nvcc %.1f s, with --split-compile 0 %.1f s (%.2fx); %s\n", n, b - a, c - b, (b - a) / (c - b), v }'
done
exit $status
