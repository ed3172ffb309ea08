#include "tuner/ranker.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/common/diagnostics.h"
#include "compiler/common/write_file_atomically.h"

namespace spmmc {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kModelFormat = "spmmc.ranker/1";

// An XGBoost call that failed is a bug of ours or of the library: InternalError with its message.
void xgb(int status, const char* what) {
  if (status != 0) throw InternalError(fmt::format("XGBoost {} failed: {}", what, XGBGetLastError()));
}

std::shared_ptr<void> new_booster(DMatrixHandle train) {
  BoosterHandle h = nullptr;
  DMatrixHandle dmats[] = {train};
  xgb(XGBoosterCreate(train ? dmats : nullptr, train ? 1 : 0, &h), "XGBoosterCreate");
  return std::shared_ptr<void>(h, [](void* p) { XGBoosterFree(p); });
}

std::shared_ptr<void> new_dmatrix(const std::vector<std::vector<double>>& rows, size_t columns) {
  std::vector<float> flat;
  flat.reserve(rows.size() * columns);
  for (const auto& r : rows)
    for (double v : r) flat.push_back(static_cast<float>(v));
  DMatrixHandle h = nullptr;
  // NaN marks a missing value; every feature is always present.
  xgb(XGDMatrixCreateFromMat(flat.data(), rows.size(), columns, std::numeric_limits<float>::quiet_NaN(), &h),
      "XGDMatrixCreateFromMat");
  return std::shared_ptr<void>(h, [](void* p) { XGDMatrixFree(p); });
}

void set_param(void* booster, const std::string& name, const std::string& value) {
  xgb(XGBoosterSetParam(booster, name.c_str(), value.c_str()), ("XGBoosterSetParam " + name).c_str());
}

void apply_params(void* booster, const RankerParams& p) {
  set_param(booster, "objective", p.objective);
  set_param(booster, "eval_metric", "ndcg@10");
  set_param(booster, "max_depth", std::to_string(p.max_depth));
  set_param(booster, "eta", fmt::format("{}", p.eta));
  set_param(booster, "min_child_weight", fmt::format("{}", p.min_child_weight));
  set_param(booster, "subsample", fmt::format("{}", p.subsample));
  set_param(booster, "seed", std::to_string(p.seed));
  set_param(booster, "nthread", std::to_string(std::max(1, p.threads)));
  set_param(booster, "tree_method", "exact");
  set_param(booster, "verbosity", "0");
}

Json params_json(const RankerParams& p) {
  return {{"objective", p.objective}, {"rounds", p.rounds},       {"max_depth", p.max_depth},
          {"eta", p.eta},             {"min_child_weight", p.min_child_weight}, {"subsample", p.subsample},
          {"seed", p.seed},           {"threads", p.threads}};
}

}  // namespace

int relevance_grade(double best_ms, double ms) {
  if (!(ms > 0.0) || !(best_ms > 0.0)) return 0;
  const double r = std::min(1.0, best_ms / ms);
  return r >= 0.95 ? 4 : r >= 0.85 ? 3 : r >= 0.70 ? 2 : r >= 0.50 ? 1 : 0;
}

RankerModel RankerModel::train(const std::vector<RankingGroup>& groups, const FeatureSchema& schema,
                               const RankerParams& params) {
  const size_t columns = schema.names.size();
  const auto bad = [](const std::string& message) { return UserError(ExitCode::kDataError, SourceLocation{}, message); };
  if (columns == 0) throw bad("the feature schema names no features");
  if (groups.empty()) throw bad("no query groups to train on");
  if (params.objective != "rank:ndcg" && params.objective != "rank:pairwise")
    throw UserError(ExitCode::kUsage, SourceLocation{},
                    fmt::format("objective '{}': expected rank:ndcg or rank:pairwise", params.objective));
  std::vector<std::vector<double>> rows;
  std::vector<float> labels;
  std::vector<unsigned> sizes;
  for (const RankingGroup& g : groups) {
    if (g.features.empty() || g.features.size() != g.times_ms.size())
      throw bad(fmt::format("group {}: {} feature rows and {} times (need the same number, at least one)", g.problem,
                            g.features.size(), g.times_ms.size()));
    for (size_t i = 0; i < g.features.size(); ++i) {
      if (g.features[i].size() != columns)
        throw bad(fmt::format("group {}: candidate {} has {} features, the schema {}", g.problem, i, g.features[i].size(),
                              columns));
      if (!(g.times_ms[i] > 0.0)) throw bad(fmt::format("group {}: candidate {} has no positive time", g.problem, i));
    }
    const double best = *std::min_element(g.times_ms.begin(), g.times_ms.end());
    for (size_t i = 0; i < g.features.size(); ++i) {
      rows.push_back(g.features[i]);
      labels.push_back(static_cast<float>(relevance_grade(best, g.times_ms[i])));
    }
    sizes.push_back(static_cast<unsigned>(g.features.size()));
  }
  const std::shared_ptr<void> data = new_dmatrix(rows, columns);
  xgb(XGDMatrixSetFloatInfo(data.get(), "label", labels.data(), labels.size()), "XGDMatrixSetFloatInfo label");
  xgb(XGDMatrixSetUIntInfo(data.get(), "group", sizes.data(), sizes.size()), "XGDMatrixSetUIntInfo group");
  RankerModel m;
  m.booster_ = new_booster(data.get());
  m.schema_ = schema;
  m.params_ = params;
  m.trained_groups_ = static_cast<int64_t>(groups.size());
  m.trained_rows_ = static_cast<int64_t>(rows.size());
  apply_params(m.booster_.get(), params);
  for (int round = 0; round < params.rounds; ++round)
    xgb(XGBoosterUpdateOneIter(m.booster_.get(), round, data.get()), "XGBoosterUpdateOneIter");
  return m;
}

void RankerModel::save(const std::filesystem::path& file) const {
  bst_ulong length = 0;
  const char* text = nullptr;
  xgb(XGBoosterSaveModelToBuffer(booster_.get(), R"({"format": "json"})", &length, &text), "XGBoosterSaveModelToBuffer");
  Json out = {{"format", kModelFormat},
              {"feature_schema_version", schema_.version},
              {"features", schema_.names},
              {"params", params_json(params_)},
              {"trained_on", {{"groups", trained_groups_}, {"rows", trained_rows_}}}};
  if (!domain_.empty()) out["domain"] = domain_json(domain_);
  out["xgboost"] = Json::parse(std::string(text, length));
  write_file_atomically(file.string(), [&](std::ostream& os) { os << out.dump(1) << '\n'; });
}

RankerModel RankerModel::load(const std::filesystem::path& file, const FeatureSchema& expected) {
  const std::string name = file.string();
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UserError(ExitCode::kNoInput, SourceLocation::whole(name), "cannot open the ranker model");
  std::stringstream buffer;
  buffer << in.rdbuf();
  Json j;
  try {
    j = Json::parse(buffer.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw UserError(ExitCode::kDataError, SourceLocation::at_byte(name, static_cast<int64_t>(e.byte)),
                    fmt::format("not a ranker model: invalid JSON ({})", e.what()));
  }
  const auto refuse = [&](const std::string& why) { return UserError(ExitCode::kDataError, SourceLocation::whole(name), why); };
  if (!j.is_object() || j.value("format", "") != kModelFormat)
    throw refuse(fmt::format("not a spmmc ranker model (its \"format\" is not \"{}\")", kModelFormat));
  RankerModel m;
  try {
    m.schema_.version = j.at("feature_schema_version").get<int>();
    m.schema_.names = j.at("features").get<std::vector<std::string>>();
    const Json& p = j.at("params");
    m.params_.objective = p.at("objective").get<std::string>();
    m.params_.rounds = p.at("rounds").get<int>();
    m.params_.max_depth = p.at("max_depth").get<int>();
    m.params_.eta = p.at("eta").get<double>();
    m.params_.min_child_weight = p.at("min_child_weight").get<double>();
    m.params_.subsample = p.at("subsample").get<double>();
    m.params_.seed = p.at("seed").get<uint64_t>();
    m.params_.threads = p.at("threads").get<int>();
    m.trained_groups_ = j.at("trained_on").at("groups").get<int64_t>();
    m.trained_rows_ = j.at("trained_on").at("rows").get<int64_t>();
    // Absent from model files written before domains were recorded: an empty (unknown) domain.
    if (j.contains("domain")) m.domain_ = domain_from_json(j["domain"]);
  } catch (const nlohmann::json::exception& e) {
    throw refuse(fmt::format("a field of the ranker model is missing or malformed: {}", e.what()));
  }
  if (m.schema_.version != expected.version || m.schema_.names != expected.names)
    throw refuse(fmt::format("the model was trained on feature schema {} ({} features: {}), this spmmc ranks with "
                             "schema {} ({} features: {}); retrain it (docs/design/ranker.md)",
                             m.schema_.version, m.schema_.names.size(), fmt::join(m.schema_.names, ", "), expected.version,
                             expected.names.size(), fmt::join(expected.names, ", ")));
  if (!j.contains("xgboost") || !j["xgboost"].is_object()) throw refuse("the ranker model has no \"xgboost\" object");
  const std::string model = j["xgboost"].dump();
  m.booster_ = new_booster(nullptr);
  if (XGBoosterLoadModelFromBuffer(m.booster_.get(), model.data(), model.size()) != 0)
    throw refuse(fmt::format("XGBoost cannot load the model: {}", XGBGetLastError()));
  set_param(m.booster_.get(), "nthread", "1");
  return m;
}

std::vector<double> RankerModel::predict(const std::vector<std::vector<double>>& rows) const {
  if (rows.empty()) return {};
  for (size_t i = 0; i < rows.size(); ++i)
    SPMMC_CHECK(rows[i].size() == schema_.names.size(),
                fmt::format("candidate {} has {} features, the model's schema {}", i, rows[i].size(), schema_.names.size()));
  const std::shared_ptr<void> data = new_dmatrix(rows, schema_.names.size());
  bst_ulong length = 0;
  const float* scores = nullptr;
  xgb(XGBoosterPredict(booster_.get(), data.get(), 0, 0, 0, &length, &scores), "XGBoosterPredict");
  SPMMC_CHECK(length == rows.size(), fmt::format("XGBoost returned {} scores for {} rows", length, rows.size()));
  return std::vector<double>(scores, scores + length);
}

std::vector<size_t> RankerModel::rank(const std::vector<std::vector<double>>& rows) const {
  const std::vector<double> scores = predict(rows);
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  return order;
}

}  // namespace spmmc
