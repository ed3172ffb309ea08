// spmmc train-ranker DATA... -o MODEL: trains the LambdaMART ranker (tuner/ranker.h) on tuning
// databases (tuner/ranking_data.h), validates it on matrices held out of training, and writes the
// model file. docs/design/ranker.md.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/planning/features.h"
#include "compiler/planning/target.h"
#include "tools/spmmc/commands.h"
#include "tuner/evaluate_ranker.h"
#include "tuner/ranker.h"
#include "tuner/ranker_domain.h"
#include "tuner/ranking_data.h"

namespace spmmc::cli {
namespace {

using Json = nlohmann::ordered_json;

Json metrics_json(const RankingMetrics& m) {
  return {{"problems", m.problems},       {"ndcg_at_10", m.ndcg_at_10}, {"top1_hit_rate", m.top1_hit_rate},
          {"top1_loss", m.top1_loss},     {"top10_loss", m.top10_loss}, {"max_top1_loss", m.max_top1_loss}};
}

std::string metrics_text(const RankingMetrics& m) {
  return fmt::format("{} problems, NDCG@10 {:.3f}, top-1 hit {:.0f}%, mean loss of the first-ranked {:.1f}% (max {:.1f}%), "
                     "of the best in the first 10 {:.1f}%",
                     m.problems, m.ndcg_at_10, 100.0 * m.top1_hit_rate, 100.0 * m.top1_loss, 100.0 * m.max_top1_loss,
                     100.0 * m.top10_loss);
}

// "n 256..8192": a field's training range, integers as integers.
std::string range_text(const char* name, const DomainRange& r) {
  const auto number = [](double v) { return v == std::round(v) ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v); };
  return fmt::format("{} {}..{}", name, number(r.min), number(r.max));
}

std::string domain_text(const TrainingDomain& d) {
  return fmt::format("{} training problems: {}, {}, {}, {}, {} (--tune model keeps its heuristic beyond x{})", d.problems,
                     range_text("n", d.n), range_text("k", d.k), range_text("rows", d.rows), range_text("nnz", d.nnz),
                     range_text("row spread", d.row_spread), kDomainSlack);
}

// The database files of DATA arguments: a folder stands for its *.jsonl files (spmmc collect writes
// one per problem), in name order.
std::vector<std::string> database_files(const std::vector<std::string>& data) {
  std::vector<std::string> files;
  for (const std::string& p : data) {
    if (!std::filesystem::is_directory(p)) {
      files.push_back(p);
      continue;
    }
    std::vector<std::string> inside;
    for (const auto& e : std::filesystem::directory_iterator(p))
      if (e.path().extension() == ".jsonl") inside.push_back(e.path().string());
    std::sort(inside.begin(), inside.end());
    if (inside.empty()) throw UserError(ExitCode::kNoInput, SourceLocation::whole(p), "no .jsonl files in this folder");
    files.insert(files.end(), inside.begin(), inside.end());
  }
  return files;
}

int run_train_ranker(const Args& args) {
  const std::string output = args.get_or("--output", "");
  if (output.empty()) fail_usage("give the model file to write: -o FILE (e.g. models/h100.ranker.json)");
  RankerParams params;
  params.objective = args.get_or("--objective", params.objective);
  if (params.objective != "rank:ndcg" && params.objective != "rank:pairwise")
    fail_usage("--objective {}: expected rank:ndcg (default) or rank:pairwise", params.objective);
  params.rounds = static_cast<int>(args.get_int("--rounds", params.rounds, 1, 100000));
  params.max_depth = static_cast<int>(args.get_int("--max-depth", params.max_depth, 1, 32));
  params.eta = args.get_double("--eta", params.eta, 1e-6, 1.0);
  params.min_child_weight = args.get_double("--min-child-weight", params.min_child_weight, 0.0, 1e6);
  params.seed = args.get_seed("--seed");
  const double share = args.get_double("--validation-share", 0.2, 0.0, 0.9);

  const FeatureSchema schema{CandidateFeatures::kSchemaVersion, CandidateFeatures::names()};
  // Lines collected under feature schema 2 get their launch features derived on this target.
  const Target target = load_target(args.get_or("--target", "h100"));
  const RankingData data = read_ranking_data(database_files(args.positional), schema, &target);
  std::vector<RankingProblem> train, validation;
  split_by_matrix(data.problems, share, params.seed, train, validation);
  if (train.empty())
    throw UserError(ExitCode::kDataError, SourceLocation::whole(args.positional.front()),
                    fmt::format("no problem to train on ({} read, {} held out for validation; each needs two Ok "
                                "candidates)",
                                data.problems.size(), validation.size()));
  std::vector<RankingGroup> groups;
  for (const RankingProblem& p : train) groups.push_back(p.group);
  RankerModel model = RankerModel::train(groups, schema, params);
  // The range of the training problems (not the validation ones): --tune model keeps its heuristic
  // outside it (tuner/ranker_domain.h).
  model.set_domain(training_domain(train, schema));
  model.save(output);
  const RankingMetrics on_train = evaluate_ranker(model, train);
  const RankingMetrics held_out = evaluate_ranker(model, validation);
  // Problems never seen in training, e.g. the shared DLMC layers (issue 12's held-out measure).
  std::optional<RankingMetrics> extra;
  if (args.has("--held-out")) {
    std::vector<std::string> held_out_data;  // comma-separated files or folders
    for (const std::string& item : args.get_list("--held-out", ""))
      if (!item.empty()) held_out_data.push_back(item);
    extra = evaluate_ranker(model, read_ranking_data(database_files(held_out_data), schema, &target).problems);
  }

  if (args.has("--json")) {
    Json out = {{"schema", "spmmc.train-ranker/1"},
                {"model", output},
                {"feature_schema_version", schema.version},
                {"lines", data.lines},
                {"not_ok", data.not_ok},
                {"single_candidate_problems", data.single},
                {"train", metrics_json(on_train)},
                {"validation", metrics_json(held_out)},
                {"domain", domain_json(model.domain())}};
    if (extra) out["held_out"] = metrics_json(*extra);
    std::fputs((out.dump(2) + "\n").c_str(), stdout);
    return 0;
  }
  std::printf("spmmc train-ranker: %lld candidates read (%lld not Ok, skipped), %zu problems (%lld with one candidate, "
              "dropped)\n",
              static_cast<long long>(data.lines), static_cast<long long>(data.not_ok), data.problems.size(),
              static_cast<long long>(data.single));
  std::printf("  train:      %s\n", metrics_text(on_train).c_str());
  if (held_out.problems > 0) std::printf("  validation: %s\n", metrics_text(held_out).c_str());
  else std::printf("  validation: no matrix held out (--validation-share %.2f)\n", share);
  if (extra) std::printf("  held out:   %s\n", metrics_text(*extra).c_str());
  std::printf("  domain:     %s\n", domain_text(model.domain()).c_str());
  std::printf("spmmc train-ranker: wrote %s (%s, %d rounds, depth %d, eta %g; feature schema %d)\n", output.c_str(),
              params.objective.c_str(), params.rounds, params.max_depth, params.eta, schema.version);
  return 0;
}

}  // namespace

Command train_ranker_command() {
  Command c;
  c.name = "train-ranker";
  c.summary = "train the LambdaMART tile ranker on tuning databases (LO-SpMM section 3.5)";
  c.usage = "spmmc train-ranker DATA [DATA ...] -o MODEL.json [options]";
  c.description =
      "Reads measured candidates (JSON lines of format spmmc.collect/1: matrix, n, tile, the ranking features,\n"
      "outcome, median ms; docs/design/ranker.md) from each DATA file, or each DATA folder's *.jsonl files\n"
      "(what spmmc collect writes), makes one query group per (matrix, n), holds out the\n"
      "matrices a seeded hash puts in --validation-share, trains XGBoost's rank:ndcg (LambdaMART) on the\n"
      "rest with integer relevance grades from each candidate's speed relative to its group's best, and\n"
      "writes MODEL.json (the XGBoost model beside the feature schema). Prints NDCG@10, the top-1 hit rate\n"
      "and the mean loss of the first-ranked candidate on the training and the held-out problems. The model\n"
      "records the range of its training problems (n, k, rows, non-zeros, row spread): spmmc compile --tune\n"
      "model keeps its heuristic for a problem outside it. Lines collected under feature schema 2 are read\n"
      "with their launch features derived on --target.\n"
      "Training is deterministic: the same data and options write the same file.";
  c.options = {
      {"--output|-o", "FILE", "the model file to write (required)"},
      {"--objective", "O", "rank:ndcg (LambdaMART, default) or rank:pairwise"},
      {"--rounds", "R", "boosting rounds (default 200)"},
      {"--max-depth", "D", "tree depth (default 6)"},
      {"--eta", "E", "learning rate (default 0.1)"},
      {"--min-child-weight", "W", "the least hessian weight in a leaf (default 0.1; LambdaMART's hessians are small: lower lets trees split)"},
      {"--validation-share", "F", "share of matrices held out of training for validation (default 0.2)"},
      {"--seed", "S", "seed of XGBoost and of the validation split (default 0)"},
      {"--held-out", "DATA[,DATA..]", "also measure the model on these database files or folders, never trained on"},
      {"--target", "T", "the GPU the data was collected on (default h100): derives the launch features of schema-2 lines"},
      {"--json", "", "print the report as JSON"},
  };
  c.min_positional = 1;
  c.max_positional = 1 << 20;
  c.run = run_train_ranker;
  return c;
}

}  // namespace spmmc::cli
