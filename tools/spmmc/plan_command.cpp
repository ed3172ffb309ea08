// spmmc plan FILE --n N: the reordering statistics, the tile space with what each constraint
// removed (a grid like LO-SpMM Fig. 3), and the survivors with their ranking features.
#include <chrono>
#include <cstdio>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "codegen/kernel_program.h"
#include "compiler/formats/input_limits.h"
#include "compiler/formats/read_matrix.h"
#include "compiler/planning/plan_tiles.h"
#include "tools/spmmc/commands.h"
#include "tuner/generic_candidate.h"
#include "tools/spmmc/json_fields.h"

namespace spmmc::cli {
namespace {

using Json = nlohmann::ordered_json;

char cell_mark(const Verdict& v) {
  switch (v.rejected_by) {
    case Constraint::kNone: return '*';
    case Constraint::kRegister: return 'R';
    case Constraint::kHardware: return 'H';
    case Constraint::kBalance: return 'B';
  }
  return '?';
}

Json features_json(const CandidateFeatures& f) {
  Json j = Json::object();
  const auto values = f.values();
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string& name = CandidateFeatures::names()[i];
    if (name == "sparsity") j[name] = values[i];
    else j[name] = static_cast<int64_t>(values[i]);
  }
  return j;
}

Json plan_json(const std::string& path, const LoadedMatrix& m, const Target& target, const PlanOptions& options,
               const Plan& plan, double load_seconds) {
  Json reorder = Json::array();
  for (const M1Plan& p : plan.per_m1) {
    reorder.push_back({{"m1", p.m1},
                       {"before", tiling_json(p.before)},
                       {"after", tiling_json(p.after)},
                       {"nnz_limit", p.tiling.nnz_limit},
                       {"fallback_assignments", p.tiling.fallback_rows.size()},
                       {"hub_columns", p.tiling.hub_columns},
                       {"hub_min_nnz", p.tiling.hub_min_nnz},
                       {"seconds", p.seconds}});
  }
  Json candidates = Json::array();
  Json survivors = Json::array();
  for (const PlannedCandidate& c : plan.candidates) {
    Json cj = {{"m1", c.tile.m1}, {"n1", c.tile.n1}, {"cols_per_thread", c.tile.cols_per_thread},
               {"family", "unrolled"}, {"rejected_by", std::string(constraint_name(c.verdict.rejected_by))}};
    if (!c.verdict.accepted()) cj["reason"] = c.verdict.reason;
    candidates.push_back(cj);
    if (c.verdict.accepted()) {
      survivors.push_back({{"m1", c.tile.m1}, {"n1", c.tile.n1}, {"cols_per_thread", c.tile.cols_per_thread},
                           {"family", "unrolled"}, {"features", features_json(c.features)}});
    }
  }
  // The generic family's candidate, as the ranker scores it beside the survivors (schema 4).
  const PlannedCandidate generic = generic_candidate(m.csr, plan, target);
  const Json generic_json = {{"m1", generic.tile.m1}, {"n1", generic.tile.n1}, {"cols_per_thread", generic.tile.cols_per_thread},
                             {"family", "generic"}, {"features", features_json(generic.features)}};
  return {{"schema", "spmmc.plan/1"},
          {"file", path},
          {"matrix", {{"rows", m.csr.rows}, {"cols", m.csr.cols}, {"nnz", m.csr.nnz()}, {"values", m.report.values_origin}}},
          {"n", options.n},
          {"target", {{"name", target.name}, {"arch", target.arch}, {"sm_count", target.sm_count}}},
          {"reorder_method", std::string(reorder_method_name(options.reorder))},
          {"thresholds",
           {{"th_row", options.constraints.max_row_cov},
            {"th_col", options.constraints.max_col_waste},
            {"extra_registers_per_column", options.constraints.extra_registers_per_column},
            {"addressing_registers", options.constraints.addressing_registers}}},
          {"feature_schema_version", CandidateFeatures::kSchemaVersion},
          {"space",
           {{"all", plan.remaining[0]},
            {"after_register", plan.remaining[1]},
            {"after_hardware", plan.remaining[2]},
            {"after_balance", plan.remaining[3]}}},
          {"reordering", reorder},
          {"candidates", candidates},
          {"survivors", survivors},
          {"generic", generic_json},
          {"seconds", {{"load", load_seconds}, {"plan", plan.seconds}}}};
}

std::string plan_text(const std::string& path, const LoadedMatrix& m, const Target& target, const PlanOptions& options,
                      const Plan& plan, double load_seconds) {
  std::string out;
  const double sparsity = 1.0 - static_cast<double>(m.csr.nnz()) / (static_cast<double>(m.csr.rows) * m.csr.cols);
  out += fmt::format("plan for {}: {} x {}, {} non-zeros (sparsity {:.4f}), n = {}\n", path, m.csr.rows, m.csr.cols,
                     m.csr.nnz(), sparsity, options.n);
  out += fmt::format("target {} ({}, {} SMs); reordering '{}'; TH_row {}, TH_col {}\n\n", target.name, target.arch,
                     target.sm_count, reorder_method_name(options.reorder), options.constraints.max_row_cov,
                     options.constraints.max_col_waste);
  out += "row reordering per M1 (natural order -> reordered):\n";
  out += fmt::format("  {:>4}  {:>6}  {:>17}  {:>21}  {:>17}  {:>9}\n", "M1", "tiles", "max nnc", "mean nnc", "COV nnz",
                     "time ms");
  for (const M1Plan& p : plan.per_m1) {
    out += fmt::format("  {:>4}  {:>6}  {:>7} -> {:>6}  {:>8.1f} -> {:>9.1f}  {:>6.3f} -> {:>7.3f}  {:>9.1f}\n", p.m1,
                       p.after.tiles, p.before.max_nnc, p.after.max_nnc, p.before.mean_nnc, p.after.mean_nnc,
                       p.before.nnz_cov, p.after.nnz_cov, p.seconds * 1e3);
  }
  // Algorithm 1's work budget (docs/design/planning.md, "Scale"): say where it was not exact.
  for (const M1Plan& p : plan.per_m1)
    if (p.tiling.hub_columns > 0)
      out += fmt::format("  M1 = {}: {} hub column(s) of at least {} non-zeros left out of the overlap search (work budget)\n",
                         p.m1, p.tiling.hub_columns, p.tiling.hub_min_nnz);
  // The grid: one row per M1, one column per N1.
  std::vector<int32_t> n1_axis;
  for (const auto& c : plan.candidates)
    if (c.tile.m1 == plan.candidates.front().tile.m1) n1_axis.push_back(c.tile.n1);
  out += "\ntile space (R register, H hardware utilisation, B load balance, * survivor); N1 across:\n";
  out += "  M1 \\ N1 ";
  for (size_t i = 0; i < n1_axis.size(); ++i) out += (i % 4 == 0) ? fmt::format("{:<4}", n1_axis[i]) : "    ";
  out += "\n";
  for (const M1Plan& p : plan.per_m1) {
    out += fmt::format("  {:>7} ", p.m1);
    for (const auto& c : plan.candidates)
      if (c.tile.m1 == p.m1) out += fmt::format("{:<4}", cell_mark(c.verdict));
    out += "\n";
  }
  out += fmt::format("\nspace: {} -> {} after register -> {} after hardware utilisation -> {} after load balance\n",
                     plan.remaining[0], plan.remaining[1], plan.remaining[2], plan.remaining[3]);
  const auto survivors = plan.survivors();
  if (!survivors.empty()) {
    out += fmt::format("\nsurvivors ({}), with the ranking features (schema {}):\n", survivors.size(),
                       CandidateFeatures::kSchemaVersion);
    out += fmt::format("  {:>4} {:>5} {:>2} {:>7} {:>10} {:>8} {:>8} {:>8} {:>9} {:>9} {:>8} {:>6}\n", "M1", "N1", "V",
                       "threads", "min_blocks", "A_tiles", "B_tiles", "blocks", "sparsity", "NNC_sum", "NNZ_max", "K");
    for (const PlannedCandidate* c : survivors) {
      const CandidateFeatures& f = c->features;
      out += fmt::format("  {:>4} {:>5} {:>2} {:>7} {:>10} {:>8} {:>8} {:>8} {:>9.4f} {:>9} {:>8} {:>6}\n", f.m1, f.n1,
                         f.cols_per_thread, f.threads_per_block, f.min_blocks_per_sm, f.a_tile_num, f.b_tile_num,
                         f.block_num, f.sparsity, f.nnc_sum, f.nnz_max, f.k);
    }
  }
  out += fmt::format("\nload {:.1f} ms, plan {:.1f} ms\n", load_seconds * 1e3, plan.seconds * 1e3);
  return out;
}

// With no survivor: which constraint removed the last candidates, and which flag relaxes it.
[[noreturn]] void fail_no_survivors(const std::string& path, const Plan& plan) {
  const PlannedCandidate* example = nullptr;
  Constraint last = Constraint::kRegister;
  if (plan.remaining[2] > 0) last = Constraint::kBalance;
  else if (plan.remaining[1] > 0) last = Constraint::kHardware;
  for (const auto& c : plan.candidates)
    if (c.verdict.rejected_by == last) example = &c;
  const char* relax = last == Constraint::kBalance
                          ? "raise --th-row and/or --th-col (default 0.25), or try --reorder"
                      : last == Constraint::kHardware
                          ? "a larger --n gives more thread blocks; a --target with fewer SMs needs fewer"
                          : "a --target with more registers per thread and per block";
  throw UserError(ExitCode::kDataError, SourceLocation::whole(path),
                  fmt::format("no tile candidate survives: the {} constraint removed the last {} (e.g. {}: {}); {}",
                              constraint_name(last), plan.remaining[static_cast<int>(last) - 1],
                              example ? example->tile.label() : "?", example ? example->verdict.reason : "", relax));
}

int run_plan(const Args& args) {
  const std::string& path = args.positional.at(0);
  if (!args.has("--n")) fail_usage("spmmc plan needs --n N (the number of columns of B and C)");
  PlanOptions options = planning_options_from(args);
  options.n = args.get_int("--n", 0, 1, kMaxIndex);
  const Target target = target_from(args);

  const LoadedMatrix m = read_matrix_file(path, read_options_from(args));
  if (m.csr.nnz() == 0)
    throw UserError(ExitCode::kDataError, SourceLocation::whole(path), "the matrix has no non-zeros: there is nothing to plan");
  check_fits_in_memory(planning_memory_bytes(m.csr), "planning this matrix", SourceLocation::whole(path));
  options.fmas_per_kernel = default_fmas_per_kernel(m.csr.nnz(), options.n, target.arch);  // as spmmc compile splits
  const Plan plan = plan_tiles(m.csr, target, options);
  if (args.has("--json")) {
    std::fputs((plan_json(path, m, target, options, plan, m.report.load_seconds).dump(2) + "\n").c_str(), stdout);
  } else {
    std::fputs(plan_text(path, m, target, options, plan, m.report.load_seconds).c_str(), stdout);
  }
  if (plan.remaining[3] == 0) fail_no_survivors(path, plan);
  return 0;
}

}  // namespace

Command plan_command() {
  Command c;
  c.name = "plan";
  c.summary = "reorder rows and prune the tile space of a matrix (LO-SpMM sections 3-4)";
  c.usage = "spmmc plan FILE --n N [options]";
  c.description =
      "Reads FILE, reorders its rows into A-tiles for every M1 (LO-SpMM Algorithm 1), and applies the\n"
      "register, hardware-utilisation and load-balance constraints to every (M1, N1) tile candidate for\n"
      "C = A*B with n columns. Prints the reordering statistics, the tile space as a grid (which\n"
      "constraint removed each cell) and the survivors with their ranking features. --json prints the\n"
      "same as one object (schema spmmc.plan/1, docs/design/planning.md). Exits 65 when no candidate\n"
      "survives, naming the constraint that removed the last ones and the flag that relaxes it.";
  c.options = {
      {"--n", "N", "columns of B and C (required)"},
  };
  for (auto& o : planning_option_specs()) c.options.push_back(o);
  c.options.push_back({"--json", "", "print JSON instead of text"});
  for (auto& o : read_option_specs()) c.options.push_back(o);
  c.min_positional = c.max_positional = 1;
  c.run = run_plan;
  return c;
}

}  // namespace spmmc::cli
