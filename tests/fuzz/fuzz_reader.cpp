// libFuzzer target for the matrix readers: one source, built once per format (fuzz_mtx,
// fuzz_smtx, ...) with SPMMC_FUZZ_FORMAT set to the format's name ("mtx", "smtx", ...).
//
// The input bytes are the file, unchanged, so every corpus file is a plain matrix file. The
// contract under test (compiler/formats/read_matrix.h): on any input, read_matrix_stream either returns
// a CSR that satisfies check_csr_invariants or throws a spmmc::UserError with the data-error
// exit code. Anything else is a finding and aborts: another exception (InternalError,
// std::bad_alloc, ...), a sanitizer report, a hang, a leak.
//
// Every input is read twice: with the default ReadOptions, and with options taken from the
// input's size (a value kind and seed for synthesised values, a pruning threshold for dense
// data). The options must not change whether the input is valid, nor the shape, and may only
// remove entries (threshold), never add any; values read from the file must not change.
#include <cstdint>
#include <cstdio>
#include <cstdlib>  // abort, setenv (POSIX)
#include <exception>
#include <optional>
#include <sstream>
#include <string>

#include "compiler/common/csr.h"
#include "compiler/common/diagnostics.h"
#include "compiler/formats/read_matrix.h"
#include "compiler/formats/read_options.h"

#ifndef SPMMC_FUZZ_FORMAT
#error "compile with -DSPMMC_FUZZ_FORMAT=\"<format name>\" (mtx, smtx, npy, npz, safetensors)"
#endif

namespace {

using spmmc::Csr;

const char kFileName[] = "fuzz-input";

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "\n==spmmc fuzz== FINDING (%s reader): %s\n", SPMMC_FUZZ_FORMAT, what.c_str());
  std::fflush(stderr);
  std::abort();
}

spmmc::MatrixFormat target_format() {
  static const std::optional<spmmc::MatrixFormat> format = spmmc::parse_format_name(SPMMC_FUZZ_FORMAT);
  if (!format) finding("SPMMC_FUZZ_FORMAT names no format");
  return *format;
}

struct Outcome {
  std::optional<Csr> csr;  // empty when the input was rejected with a UserError
  spmmc::ReadReport report;
  std::string error;       // the diagnostic when rejected
};

Outcome read_once(const uint8_t* data, size_t size, spmmc::ReadOptions options, const char* run) {
  Outcome outcome;
  try {
    const auto read = [&] {
      std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
      outcome.report = {};
      return spmmc::read_matrix_stream(in, target_format(), kFileName, options, outcome.report);
    };
    Csr csr;
    try {
      csr = read();
    } catch (const spmmc::UserError& e) {
      // --threshold is refused (usage error) for sparse input: then read without it.
      if (options.threshold <= 0 || e.code() != spmmc::ExitCode::kUsage ||
          e.message() != spmmc::kThresholdIsForDenseInput)
        throw;
      options.threshold = 0;
      csr = read();
    }
    spmmc::check_csr_invariants(csr);
    outcome.csr = std::move(csr);
  } catch (const spmmc::UserError& e) {
    // Malformed content is a data error that names the input (read_matrix.h).
    if (e.code() != spmmc::ExitCode::kDataError)
      finding(std::string(run) + ": UserError with exit code " + std::to_string(static_cast<int>(e.code())) +
              " instead of the data-error code: " + e.what());
    if (e.message().empty()) finding(std::string(run) + ": UserError without a message");
    // The input's name, or a part of it: "fuzz-input[indices.npy]" for an .npz member.
    if (e.where().file.rfind(kFileName, 0) != 0)
      finding(std::string(run) + ": UserError names file '" + e.where().file + "': " + e.what());
    outcome.error = spmmc::format_diagnostic(e);
  } catch (const spmmc::InternalError& e) {
    finding(std::string(run) + ": InternalError: " + e.what());
  } catch (const std::exception& e) {
    finding(std::string(run) + ": exception other than UserError: " + e.what());
  } catch (...) {
    finding(std::string(run) + ": non-standard exception");
  }
  if (outcome.csr) {
    const spmmc::ReadReport& r = outcome.report;
    if (r.stored_entries < 0 || r.explicit_zeros_dropped < 0 || r.duplicates_summed < 0 || r.mirrored_entries < 0 ||
        r.pruned_by_threshold < 0)
      finding(std::string(run) + ": negative count in the ReadReport");
    if (outcome.csr->nnz() > r.stored_entries + r.mirrored_entries)
      finding(std::string(run) + ": more non-zeros (" + std::to_string(outcome.csr->nnz()) +
              ") than stored plus mirrored entries");
  }
  return outcome;
}

// Options common to both runs: safetensors needs a tensor name, and the seeds name theirs
// "weight" (make_seeds.py).
spmmc::ReadOptions base_options() {
  spmmc::ReadOptions options;
  if (target_format() == spmmc::MatrixFormat::kSafetensors) options.tensor = "weight";
  return options;
}

// The second run's options, derived from the input so that each input has exactly one meaning.
spmmc::ReadOptions variant_options(size_t size) {
  spmmc::ReadOptions options = base_options();
  static const spmmc::ValueKind kinds[] = {spmmc::ValueKind::kUniform, spmmc::ValueKind::kOnes,
                                           spmmc::ValueKind::kNormal};
  options.values = kinds[size % 3];
  options.seed = static_cast<uint64_t>(size) * 0x9E3779B97F4A7C15ull;
  options.threshold = (size % 2 == 0) ? 1.0 : 0.25;
  return options;
}

// `pruned` (second run) must have `full`'s shape and a subset of its entries; where `same_values`,
// the kept entries keep their values.
void check_subset(const Csr& full, const Csr& pruned, bool same_values) {
  if (full.rows != pruned.rows || full.cols != pruned.cols) finding("the options changed the shape");
  for (int32_t r = 0; r < full.rows; ++r) {
    int32_t p = full.row_ptr[r];
    const int32_t p_end = full.row_ptr[r + 1];
    for (int32_t q = pruned.row_ptr[r]; q < pruned.row_ptr[r + 1]; ++q) {
      while (p < p_end && full.col_idx[p] < pruned.col_idx[q]) ++p;
      if (p == p_end || full.col_idx[p] != pruned.col_idx[q])
        finding("the options added entry (" + std::to_string(r) + ", " + std::to_string(pruned.col_idx[q]) + ")");
      if (same_values && full.values[p] != pruned.values[q])
        finding("the options changed the value read from the file at (" + std::to_string(r) + ", " +
                std::to_string(pruned.col_idx[q]) + ")");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A memory budget well below libFuzzer's -malloc_limit_mb=2048: a size the input claims must
  // be refused by check_fits_in_memory (input_limits.h) before it is allocated; an allocation
  // that bypasses the check shows up as an out-of-memory finding. An explicit setting wins.
  static const bool budget_set = setenv("SPMMC_MEMORY_LIMIT_MB", "32", /*overwrite=*/0) == 0;
  (void)budget_set;
  const Outcome plain = read_once(data, size, base_options(), "default options");
  const Outcome varied = read_once(data, size, variant_options(size), "varied options");
  if (plain.csr.has_value() != varied.csr.has_value()) {
    finding(std::string("the options changed whether the input is valid: ") +
            (plain.csr ? "accepted by default, rejected with varied options: " + varied.error
                       : "rejected by default (" + plain.error + "), accepted with varied options"));
  }
  if (plain.csr) {
    const bool values_from_file = plain.report.values_origin == "file" && varied.report.values_origin == "file";
    check_subset(*plain.csr, *varied.csr, values_from_file);
  }
  return 0;
}
