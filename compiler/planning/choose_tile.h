// The tile choice of `spmmc compile --tune none`: a documented heuristic over the planned
// candidates, until the ranker (a later issue) replaces it.
#pragma once

#include <functional>
#include <string>

#include "compiler/planning/plan_tiles.h"
#include "compiler/planning/target.h"

namespace spmmc {

// The design's default first (docs/design/kernel.md, measured on an H100): V = 1, N1 = threads
// per block chosen by balanced_threads for each M1 (n rounded up to the warp size where n < 512),
// the register budget's minimum blocks per SM (64 registers per thread, more where one block of
// over 512 threads fills an SM), and M1 = 16 rows per tile or M1 = 32. M1 = 32 halves the loads
// of B per FMA but halves the A-tiles, so its launch may leave fewer warps on each SM: it is taken
// where its launch keeps more than kWiderTileWarpShare of the resident warps per SM that M1 = 16
// has (resident_warps_per_sm), and it fits; M1 = 16 otherwise (study 16: 1.03-1.46x on the 36
// shared layers that pass, 0.72-0.89x where a 512-row layer at n = 4096 halves its warps).
// Before both, where A's non-empty rows form one A-tile at M1 = 64 and more than one at M1 = 32
// (33-64 of them), the single-tile tile (M1 = 64, V = 1, N1 = single_tile_threads) is taken if it
// fits and its launch fills at least kSingleTileMinWaveFill of a wave: every block then loads each
// column of B once for all rows, where M1 = 16's A-tiles load it 1.5-3.9 times over on the shared
// layers (NNC_sum; kSingleTileMinWaveFill, kSingleTileBlocksPerSm).
// Where M1 = 16 does not `fit` (the size guard's compile time) M1 = 32 is taken if it fits, and
// still when neither fits: larger tiles would spill under the budget, so the size guard refuses it
// with its message instead. Candidates rejected by the register constraint never qualify; one
// rejected for load balance or too few blocks does: the design's mapping loops blocks over
// B-tiles, so it keeps the SMs busy either way.
// When the design has no candidate (the register constraint), the older rule over the planning
// survivors (docs/emitted-code.md): M1 <= 64 and N1 <= 256 in full waves, the largest tile area
// M1 x N1, then the fewest loads of B (smallest NNC_sum), then the larger N1, widening step by
// step; when nothing survived the constraints, candidates rejected only for too few thread blocks
// or for load balance compete instead. Returns nullptr only when the register constraint removed
// everything; `why` says what decided.
// The columns of C that the busiest SM computes, for `a_tiles` A-tiles at width n, with blocks of
// n1 columns, `blocks_per_sm` of them resident per SM, on `sms` SMs: the emitted launch
// (blocks_per_a_tile blocks per A-tile, each looping over its B-tiles; the last B-tile may be
// partial) with the blocks spread over the SMs in launch order. The heuristic's model of the
// kernel's time: an SM's throughput is shared by its blocks, so its time grows with its columns.
int64_t busiest_sm_columns(int64_t a_tiles, int64_t n, int64_t n1, int64_t blocks_per_sm, int64_t sms);

// Threads per block (V = 1) of the default tile: where n >= 512, the multiple of the warp size in
// [512, 1024] whose launch leaves the busiest SM the fewest columns (busiest_sm_columns with the
// register budget's blocks per SM on the target's SMs), the most threads among equals; n rounded
// up to the warp size otherwise. E.g. 16 A-tiles at n = 6272 on 132 SMs: 1024 threads give 112
// blocks of 1024 columns, 800 threads 128 blocks of 800 (docs/design/kernel.md, item 5).
int64_t balanced_threads(int64_t a_tiles, int64_t n, const Target& target);

const PlannedCandidate* choose_tile_by_heuristic(const Plan& plan, const Target& target,
                                                 const std::function<bool(const PlannedCandidate&)>& fits, std::string& why);

// The warps per SM that the unrolled launch of `a_tiles` A-tiles at width n keeps resident in its
// first wave, averaged over the target's SMs: the launch's blocks (a_tiles x blocks_per_a_tile),
// at most the target's SMs x the tile's launch-bound minimum blocks per SM, times the warps of a
// block, over the SMs. E.g. a 512-row layer at n = 4096: 32 A-tiles of 16 rows in 128 blocks of
// 1024 threads keep 31 warps per SM; 16 A-tiles of 32 rows in 128 blocks of 512 keep 15.5.
double resident_warps_per_sm(int64_t a_tiles, int64_t n, const TileCandidate& tile, const Target& target);

// The heuristic takes M1 = 32 where its launch keeps more than this share of M1 = 16's resident
// warps per SM. Measured on an H100 (docs/benchmarks.md, study 16, all 102 unrolled shared
// layers at both M1): shares of 0.78-1.39 ran 1.03-1.46x faster at M1 = 32 (one layer 0.84x),
// 0.50-0.73 ran 0.55-0.91x; at exactly 0.75 (64-row layers at n = 100352) 0.81-1.06x.
constexpr double kWiderTileWarpShare = 0.75;

// The single-tile rule of the heuristic (choose_tile_by_heuristic): for a layer of 33-64 non-empty
// rows, one A-tile of M1 = 64 in blocks of kSingleTileBlocksPerSm per SM, where its launch fills at
// least kSingleTileMinWaveFill of a wave. Measured on an H100 (docs/benchmarks.md, "The whole
// shared set (issue 25)", `--tune rank`'s real kernels against the heuristic's in one process): on
// the ResNet-50 layers of 64 rows at n = 100352 (K = 256 and 576, 737-7372 non-zeros) 64x384 ran
// 1.05-1.22x the heuristic's 16x1024 (10 layers), on MobileNet's 64-row layer at n = 401408 64x448
// ran 1.04x its 32x832; on the ResNet-50 ones the warp share kept M1 = 16 (M1 = 32 at 0.75 of its
// warps), and 64x384 keeps 23.8 warps per SM against M1 = 16's 32 (0.74). M1 = 64 tiles lost only
// where A had several of them: 0.83x and 0.93x on 512 x 128 layers of 30% and 20% density,
// 0.78-0.95x on MobileNet's layers of 128 and 256 rows (64x448, 64x224), while on 512 x 128 layers
// of 2-10% density they won 1.07-1.09x; nothing the plan knows separated those yet, so layers of
// several A-tiles at M1 = 64 keep the rule above. Not measured: the 64-row layers at 2% (327
// non-zeros) and 30% (11059) density, where `rank` emitted 32x448 and kept 16x1024 (64x224 ran
// 1.08x on the latter by scripts/kernel-study.sh), and any 64-row layer below a full wave (n below
// about 90k). The winners' launches filled 0.99 and 1.0 of a wave; 0.95 leaves room for a partial
// last B-tile, not for a launch that leaves SMs idle.
constexpr double kSingleTileMinWaveFill = 0.95;
// Two blocks per SM leave a 64-row tile's 64 accumulators 73-93 registers (352-448 threads); the
// single-tile rule takes only those. With four (224 threads, 72 registers), 64x224 ran 0.96-1.06x
// where 64x384 ran 1.08-1.20x on the same 7 layers (docs/benchmarks.md, the same section: the
// `--tune model` departures, timed by scripts/kernel-study.sh, against the `auto` column).
constexpr int32_t kSingleTileBlocksPerSm = 2;

// Threads per block (V = 1) of the single-tile rule's tile for `a_tiles` A-tiles at width n: among
// the M1 = 64 candidates of `plan` that the register constraint keeps, with kSingleTileBlocksPerSm
// blocks per SM, the width whose launch leaves the busiest SM the fewest columns
// (busiest_sm_columns), the most threads among equals; 0 where there is none. E.g. one A-tile at
// n = 100352 on 132 SMs: 384 threads give 262 blocks of one B-tile, 2 on the busiest SM (768
// columns); 448 give 224 (896 columns).
int64_t single_tile_threads(const Plan& plan, int64_t a_tiles, const Target& target);

// The share of one wave of resident blocks (the target's SMs x the tile's launch-bound minimum
// blocks per SM) that the unrolled launch of `a_tiles` A-tiles at width n fills: a_tiles x
// blocks_per_a_tile blocks, at most one wave, over the wave. 1 when the launch fills the GPU.
double unrolled_wave_fill(int64_t a_tiles, int64_t n, const TileCandidate& tile, const Target& target);

// `spmmc compile --family auto` picks the generic family (A as CSR constants, one thread per
// element of C: docs/emitted-code.md) for a layer of at least kGenericMinNonZeros non-zeros whose
// unrolled launch fills less than kGenericBelowWaveFill of a wave. Measured on an H100
// (docs/benchmarks.md, study 10): the 12 shared layers below that fill (0.01 at n = 32, 0.48 for
// K = 4608 at n = 1568; 41k-708k non-zeros) ran 1.16-12x faster generic, the controls at fills
// >= 0.97 1.2-2.3x faster unrolled; no layer of the set falls in between. Until 2026-12-05 the rule
// began at 32768 non-zeros, smaller layers not compared; then, at n = 4096 on an H100, the two smaller
// ones measured (ResNet-50 1x1 layers of 64 x 576 and 128 x 1152, 11 059 and 29 491 non-zeros, 12%
// and 24% of a wave) ran 2.1x and 1.45x faster generic (2.4x and 2.5x at n = 2048), and the search
// itself measured the first 1.97x (docs/benchmarks.md, *The paths between n = 256 and 4096*); as
// emitted, the nine shared layers of 8192-32767 non-zeros below that fill at n = 4096 ran generic
// 1.02-2.32x faster (geomean 1.43x), and of three smaller ones two were even and one (64 rows, 7 372
// non-zeros) 1.93x (*Where the balanced path ends*). Below 8192 non-zeros layers stay unrolled.
constexpr double kGenericBelowWaveFill = 0.75;
constexpr int64_t kGenericMinNonZeros = 8192;
// It also picks the generic family for a layer of at least kGenericMinNonZeros non-zeros whose tile's
// A-tiles share few columns: fewer than kGenericBelowProductsPerLoad products per row of B the
// unrolled code loads (non-zeros / the sum over A-tiles of their non-empty columns, after
// reordering). The unrolled kernel's gain is the reuse of each loaded value of B, held in a
// register, by the tile's rows that share its column; without reuse it is a stream of one load per
// product in megabytes of code. Measured (docs/benchmarks.md, issue 28; docs/design/tuning.md): the
// graphs whose unrolled files the defaults emitted at n = 128 (1.02-1.35 products per load) ran
// 0.32-0.91x the best cuSPARSE algorithm after 58-202 s of nvcc, where the generic family ran
// 1.25-1.51x and the balanced one 1.39-1.82x, built in seconds. Every shared DNN layer of at least
// kGenericMinNonZeros non-zeros that the wave rule leaves unrolled has at least 1.59 with the
// heuristic's tile at its usual n (those below, e.g. the ResNet-50 group-4 3x3 layer at 0.98 with
// 1.24, are generic by the wave rule already), so none changes; the threshold lies between.
constexpr double kGenericBelowProductsPerLoad = 1.4;
// Products per row of B the unrolled code of a tile loads: A's non-zeros / features.nnc_sum (1 where
// no column is loaded).
double products_per_b_load(const PlannedCandidate& c, int64_t nnz);

// The warps of the tensor-core family's launch for A at width n (codegen/templates/
// kernel_tensor_core.cuh): one per window of 8 rows (the non-empty rows, then the empty ones) and
// 64 columns of C.
int64_t tensor_core_warps(const Csr& a, int64_t n);
// `spmmc compile --family auto` with --dtype fp16|bf16 on sm_80 and later takes the tensor-core
// family where its launch has at least kTensorCoreMinWarpsPerSm warps per SM; below that, the
// generic family where the CUDA-core rule above takes it, else the tensor cores again (never the
// unrolled family). Measured on an H200 (docs/benchmarks.md, "Half precision"): on 123 shared layers
// and graphs the tensor-core kernel ran 1.43x cuSPARSE FP16 (geomean); the six ResNet-50 final
// layers at n = 32 (125 windows x 1 column block: under one warp per SM) ran 0.22-0.35x on the
// tensor cores and 0.75-0.80x generic, while a graph with 678 warps (cora at n = 128, 5 per SM) ran
// 1.77x; below the warps, where the rule gives the unrolled family (a 512 x 512 layer at n = 128,
// 256, 512), the tensor cores ran 1.45-1.49x faster than it, and where it gives the generic family
// 0.80-0.83x as fast as that.
constexpr int64_t kTensorCoreMinWarpsPerSm = 4;

}  // namespace spmmc
