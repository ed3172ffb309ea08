#include "tuner/ranking_data.h"

#include <fstream>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/common/diagnostics.h"
#include "compiler/planning/features.h"
#include "compiler/planning/target.h"

namespace spmmc {
namespace {

constexpr const char* kFormat = "spmmc.collect/1";

struct Entry {
  std::vector<double> features;
  double ms = 0.0;
};

// FNV-1a over the bytes, then mixed with the seed: a stable hash (std::hash is not specified).
uint64_t stable_hash(const std::string& text, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ (seed * 0x9e3779b97f4a7c15ull);
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

// The features of a line collected under schema 2 or 3, as schema 4 has them. Schema 2's stored
// ones with the launch features derived from them on `target` (nullptr: not upgradable) and the
// kernel count the line recorded; schema 3's as stored; both of the unrolled family (the only one
// collected before schema 4).
nlohmann::json upgraded(const nlohmann::json& stored, int version, int64_t kernels, const Target* target) {
  nlohmann::json out = stored;
  if (version == 2) {
    CandidateFeatures f;
    const auto get = [&](const char* name) { return static_cast<int64_t>(stored.at(name).get<double>()); };
    f.a_tile_num = get("a_tile_num");
    f.b_tile_num = get("b_tile_num");
    f.block_num = get("block_num");
    f.sparsity = stored.at("sparsity").get<double>();
    f.nnc_sum = get("nnc_sum");
    f.nnz_max = get("nnz_max");
    f.m1 = get("m1");
    f.n1 = get("n1");
    f.k = get("k");
    f.cols_per_thread = get("cols_per_thread");
    f.threads_per_block = get("threads_per_block");
    f.min_blocks_per_sm = get("min_blocks_per_sm");
    derive_launch_features(f, *target, kernels);
    out = nlohmann::json::object();
    const std::vector<double> values = f.values();
    for (size_t i = 0; i < values.size(); ++i) out[CandidateFeatures::names()[i]] = values[i];
  }
  out["family"] = 0.0;
  return out;
}

}  // namespace

RankingData read_ranking_data(const std::vector<std::string>& files, const FeatureSchema& schema,
                              const Target* upgrade_target) {
  RankingData data;
  // (matrix, n) -> tile -> entry, keeping the order problems and tiles first appear.
  std::map<std::pair<std::string, int64_t>, size_t> problem_index;
  std::vector<std::pair<std::string, int64_t>> problem_keys;
  std::vector<std::map<std::string, Entry>> entries;
  std::vector<std::vector<std::string>> tile_order;
  for (const std::string& file : files) {
    std::ifstream in(file);
    if (!in) throw UserError(ExitCode::kNoInput, SourceLocation::whole(file), "cannot open the tuning database");
    std::string line;
    int64_t number = 0;
    while (std::getline(in, line)) {
      ++number;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const auto bad = [&](const std::string& why) {
        return UserError(ExitCode::kDataError, SourceLocation::at_line(file, number), why);
      };
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(line);
      } catch (const nlohmann::json::parse_error& e) {
        throw bad(fmt::format("not a JSON line: {}", e.what()));
      }
      if (!j.is_object() || !j.contains("format") || j["format"] != kFormat)
        throw bad(fmt::format("not a tuning database line (its \"format\" is not \"{}\")", kFormat));
      try {
        const int version = j.at("feature_schema_version").get<int>();
        const bool upgrade = schema.version == CandidateFeatures::kSchemaVersion &&
                             ((version == 2 && upgrade_target != nullptr) || version == 3);
        if (version != schema.version && !upgrade)
          throw bad(fmt::format("collected with feature schema {}, this spmmc trains on schema {}: collect again",
                                version, schema.version));
        const std::string matrix = j.at("matrix").get<std::string>();
        const int64_t n = j.at("n").get<int64_t>();
        const std::string tile = j.at("tile").get<std::string>();
        const std::string outcome = j.at("outcome").get<std::string>();
        ++data.lines;
        if (outcome != "Ok") {
          ++data.not_ok;
          continue;
        }
        Entry e;
        e.ms = j.at("ms").get<double>();
        if (!(e.ms > 0.0)) throw bad(fmt::format("an Ok candidate with time {} ms", e.ms));
        const nlohmann::json features =
            upgrade ? upgraded(j.at("features"), version, j.value("kernels", int64_t{1}), upgrade_target) : j.at("features");
        for (const std::string& name : schema.names) {
          if (!features.contains(name)) throw bad(fmt::format("feature \"{}\" is missing", name));
          e.features.push_back(features.at(name).get<double>());
        }
        const auto key = std::make_pair(matrix, n);
        auto [it, inserted] = problem_index.emplace(key, problem_keys.size());
        if (inserted) {
          problem_keys.push_back(key);
          entries.emplace_back();
          tile_order.emplace_back();
        }
        auto& tiles = entries[it->second];
        if (tiles.find(tile) == tiles.end()) tile_order[it->second].push_back(tile);
        tiles[tile] = std::move(e);  // measured again (a resumed collection): the later line counts
      } catch (const nlohmann::json::exception& e) {
        throw bad(fmt::format("a field is missing or has the wrong type: {}", e.what()));
      }
    }
  }
  for (size_t p = 0; p < problem_keys.size(); ++p) {
    if (tile_order[p].size() < 2) {
      ++data.single;
      continue;
    }
    RankingProblem problem;
    problem.matrix = problem_keys[p].first;
    problem.n = problem_keys[p].second;
    problem.group.problem = fmt::format("{}@{}", problem.matrix, problem.n);
    for (const std::string& tile : tile_order[p]) {
      const Entry& e = entries[p].at(tile);
      problem.tiles.push_back(tile);
      problem.group.features.push_back(e.features);
      problem.group.times_ms.push_back(e.ms);
    }
    data.problems.push_back(std::move(problem));
  }
  return data;
}

void split_by_matrix(const std::vector<RankingProblem>& all, double validation_share, uint64_t seed,
                     std::vector<RankingProblem>& train, std::vector<RankingProblem>& validation) {
  train.clear();
  validation.clear();
  for (const RankingProblem& p : all) {
    const double u = static_cast<double>(stable_hash(p.matrix, seed) >> 11) * 0x1.0p-53;  // in [0, 1)
    (u < validation_share ? validation : train).push_back(p);
  }
}

}  // namespace spmmc
