// The tuning database the ranker trains on (issue 12): JSON lines of format spmmc.collect/1, one
// measured candidate per line, read into one query group per (matrix, n) problem.
//   {"format": "spmmc.collect/1", "matrix": "dlmc/.../q.smtx", "n": 4096, "tile": "16x1024",
//    "feature_schema_version": 3, "features": {"a_tile_num": 32, ...}, "outcome": "Ok", "ms": 0.0305}
// docs/design/ranker.md describes the fields.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tuner/ranker.h"

namespace spmmc {

struct RankingProblem {
  std::string matrix;              // the matrix's id as collected
  int64_t n = 0;
  std::vector<std::string> tiles;  // the candidates of `group`, in its order
  RankingGroup group;              // problem "<matrix>@<n>"; features in the schema's order
};

struct RankingData {
  std::vector<RankingProblem> problems;  // in the order their first line appears
  int64_t lines = 0;                     // measured candidates read
  int64_t not_ok = 0;                    // lines whose outcome was not Ok (not timed: skipped)
  int64_t single = 0;                    // problems dropped for fewer than two Ok candidates
};

struct Target;

// Reads the database files in order. A line that is not valid JSON, lacks a field, has another
// format, or whose feature schema differs from `schema` (version, or a feature missing) is a
// UserError (exit 65) at file:line; blank lines are skipped. A candidate measured twice (the same
// matrix, n and tile, e.g. a resumed collection) keeps the later line. Lines of schema 3 are read
// for schema 4 as the unrolled family (family 0); with `upgrade_target`, lines of schema 2 too,
// their launch features derived on that target (derive_launch_features,
// compiler/planning/features.h) with the kernel count they recorded. The lines of one problem
// may come from several files (a part collected later, e.g. the generic family's kernels).
RankingData read_ranking_data(const std::vector<std::string>& files, const FeatureSchema& schema,
                              const Target* upgrade_target = nullptr);

// Splits problems by matrix so that no matrix is in both parts (no leakage): a matrix goes to the
// validation part when a hash of its id and `seed` falls below `validation_share`. Deterministic.
void split_by_matrix(const std::vector<RankingProblem>& all, double validation_share, uint64_t seed,
                     std::vector<RankingProblem>& train, std::vector<RankingProblem>& validation);

}  // namespace spmmc
