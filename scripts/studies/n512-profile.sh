#!/usr/bin/env bash
# Issue 27: Nsight Compute profiles of the 512-row transformer layers at n = 512, where the warp per row
# runs 0.72-0.86x cuSPARSE's CSR_ALG3 (docs/benchmarks.md): each layer's generic-family file (the warp
# per row from n = 512, --balanced-below 0) beside cuSPARSE's algorithms and cuBLAS SGEMM in the same
# harness (scripts/profile-kernel.sh --with-peers). On a lent GPU machine after scripts/pack-for-gpu.sh
# (the matrices below under .gpu-pack); writes $OUT/n512-profile-LABEL.md (the table) and
# $OUT/n512-profile-LABEL-details.txt (ncu's details page: memory tables, shared memory, occupancy limits).
# usage: scripts/studies/n512-profile.sh [N [LAUNCHES [LABEL ...]]]
#   N: columns of B (default 512); LAUNCHES: kernels profiled in launch order (default 24: spmmc's two,
#   then cuSPARSE's DEFAULT, ALG2, ALG1 and ALG3 with their helper kernels); LABEL: attn_v_09, ffn_conv2_08 (default both)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. scripts/studies/gpu-machine.sh
n=${1:-512} launches=${2:-24}
shift $(( $# < 2 ? $# : 2 ))
want=" ${*:-attn_v_09 ffn_conv2_08} "
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" .gpu-profile
d=../shared/data/dlmc/transformer/magnitude_pruning
sections="SpeedOfLight LaunchStats Occupancy MemoryWorkloadAnalysis WarpStateStats InstructionStats"
for spec in "attn_v_09:$d/0.9/body_encoder_layer_0_self_attention_multihead_attention_v_fully_connected.smtx" \
            "ffn_conv2_08:$d/0.8/body_encoder_layer_0_ffn_conv2_fully_connected.smtx"; do
  label=${spec%%:*} matrix=${spec#*:}
  [[ $want == *" $label "* ]] || continue
  .gpu-bin/spmmc compile "$matrix" --n 4096 --family generic --tune none --balanced-below 0 --name "$label" \
    -o ".gpu-profile/$label" --quiet || continue
  scripts/profile-kernel.sh ".gpu-profile/$label/$label.cu" "$matrix" "$n" --with-peers --kernel-regex . \
    --launch-skip 0 --launch-count "$launches" --sections "$sections" --out ".gpu-profile/p-$label" &&
    cp ".gpu-profile/p-$label/summary.md" "$OUT/n512-profile-$label.md" &&
    cp ".gpu-profile/p-$label/details.txt" "$OUT/n512-profile-$label-details.txt"
done
