// The host side of spmmc-gpu-bench (bench_host.h).
#include "tools/gpu_bench/bench_host.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/common/diagnostics.h"
#include "compiler/common/synthesize_values.h"
#include "compiler/formats/read_matrix.h"
#include "runtime/reference_spmm.h"

namespace spmmc::gpu_bench {
namespace {

[[noreturn]] void usage_error(const std::string& message) {
  throw BenchFailure(kExitUsage, message + " (see spmmc-gpu-bench --help)");
}

int64_t parse_integer(const std::string& option, const std::string& text, int64_t min, int64_t max) {
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end == nullptr || *end != '\0' || errno == ERANGE)
    usage_error(fmt::format("{}: '{}' is not an integer", option, text));
  if (value < min || value > max) usage_error(fmt::format("{}: {} is outside [{}, {}]", option, value, min, max));
  return value;
}

uint64_t parse_unsigned(const std::string& option, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  if (text.empty() || text[0] == '-') usage_error(fmt::format("{}: '{}' is not a non-negative integer", option, text));
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (end == nullptr || *end != '\0' || errno == ERANGE)
    usage_error(fmt::format("{}: '{}' is not a non-negative integer", option, text));
  return value;
}

double parse_real(const std::string& option, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end == nullptr || *end != '\0' || errno == ERANGE || !std::isfinite(value) || value < 0)
    usage_error(fmt::format("{}: '{}' is not a non-negative number", option, text));
  return value;
}

nlohmann::json stats_json(const std::optional<TimingStats>& t) {
  if (!t) return nullptr;
  return {{"median", t->median_ms}, {"p20", t->p20_ms}, {"p80", t->p80_ms}, {"min", t->min_ms}, {"runs", t->runs}};
}

nlohmann::json optional_number(const std::optional<double>& x) {
  if (!x || !std::isfinite(*x)) return nullptr;
  return *x;
}

std::optional<double> median_of(const std::optional<TimingStats>& t) {
  if (!t) return std::nullopt;
  return t->median_ms;
}

std::optional<double> ratio(const std::optional<double>& num, const std::optional<double>& den) {
  if (!num || !den || *den <= 0) return std::nullopt;
  return *num / *den;
}

std::string ms_text(const std::optional<double>& ms) { return ms ? fmt::format("{:.4f} ms", *ms) : "-"; }

}  // namespace

std::string sputnik_source_dir() {
#if defined(SPMMC_WITH_SPUTNIK)
  return SPMMC_SPUTNIK_SOURCE_DIR;
#else
  return {};
#endif
}

std::string usage_text() {
  return "usage: spmmc-gpu-bench --matrix FILE --n N --kernel libNAME.so --name NAME [options]\n"
         "       spmmc-gpu-bench --device-info\n\n"
         "Checks and times an spmmc-emitted SpMM kernel (C = A*B, float32, row-major) against a float64\n"
         "CPU reference, cuSPARSE SpMM (CSR; DEFAULT, CSR_ALG1/2/3, fastest kept), Sputnik's CudaSpmm\n"
         "(rows by length, longest first) and cuBLAS SGEMM on dense A (FP32, no TF32; with --dtype tf32\n"
         "the TF32 GEMM instead).\n"
         "Sputnik: " +
         (sputnik_source_dir().empty() ? std::string("not built into this binary (reported as skipped)")
                                       : "built from " + sputnik_source_dir()) +
         "\n\n"
         "options:\n"
         "  --matrix FILE        the matrix A the kernel was compiled from\n"
         "  --seed S             seed for synthesised values (as given to spmmc compile; default 0)\n"
         "  --values KIND        normal, uniform or ones for topology-only input (as given to spmmc compile)\n"
         "  --threshold T        dense input (.npy, .npz, .safetensors): drop weights with |w| <= T (as given\n"
         "                       to spmmc compile; default 0)\n"
         "  --tensor NAME        safetensors: the tensor to read (as given to spmmc compile)\n"
         "  --n N                columns of B and C\n"
         "  --kernel FILE        the shared library built from NAME.cu (nvcc -shared)\n"
         "  --name NAME          the entry point; NAME_info() describes it\n"
         "  --runs R             timed runs per kernel, median reported (default 50)\n"
         "  --warmup W           untimed runs before timing (default 10)\n"
         "  --no-timing          check correctness only\n"
         "  --spmmc-only         run spmmc's kernel alone (checked, then --warmup + --runs launches), no\n"
         "                       baselines: for profilers (scripts/profile-kernel.sh)\n"
         "  --dense-limit MIB    skip the dense GEMM where dense A takes more than MIB MiB (default 4096;\n"
         "                       it is skipped too where dense A exceeds half the GPU's free memory)\n"
         "  --json FILE          append the result as one JSON object per line\n"
         "  --label TEXT         free text recorded with the result\n"
         "  --nvcc-seconds X     nvcc time of the kernel, recorded with the result\n"
         "  --dtype T            fp32 (default), fp16, bf16 or tf32: the kernel's B and C (as given to spmmc\n"
         "                       compile); in half precision A is rounded as spmmc rounds it, cuSPARSE and the\n"
         "                       dense GEMM run in that dtype with float32 compute, results are checked\n"
         "                       against float64 within the bound of docs/design/precision.md; no Sputnik.\n"
         "                       tf32: B and C float; spmmc's kernel gets B as drawn (it rounds B itself),\n"
         "                       the reference and the peers A and B rounded to tf32; peers cuSPARSE SpMM in\n"
         "                       FP32 (it has no TF32 compute type), Sputnik (FP32) and cuBLAS's TF32 GEMM\n"
         "                       (cublasGemmEx, CUBLAS_COMPUTE_32F_FAST_TF32); checked within the tf32 bound\n"
         "                       (a tf32 file of a CUDA-core family multiplies B as drawn: checked against\n"
         "                       that product within float32's bound)\n"
         "  --device-info        print the GPU this would run on, then exit\n\n"
         "exit codes: 0 pass, 1 wrong result, 64 usage, 65 bad data or kernel/matrix mismatch,\n"
         "            66 missing input, 69 no GPU, 70 a CUDA/cuSPARSE/cuBLAS call failed\n";
}

BenchOptions parse_bench_options(const std::vector<std::string>& args) {
  BenchOptions o;
  bool have_n = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) usage_error(fmt::format("{} needs a value", a));
      return args[++i];
    };
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--matrix") {
      o.matrix = value();
    } else if (a == "--seed") {
      o.read.seed = parse_unsigned(a, value());
    } else if (a == "--values") {
      const std::string& v = value();
      o.read.values = parse_value_kind(v);
      if (!o.read.values) usage_error(fmt::format("--values: unknown kind '{}' (expected normal, uniform or ones)", v));
    } else if (a == "--threshold") {
      o.read.threshold = parse_real(a, value());
      if (!(o.read.threshold >= 0.0)) usage_error(fmt::format("--threshold: expected a value >= 0, got {}", args[i]));
    } else if (a == "--tensor") {
      o.read.tensor = value();
    } else if (a == "--n") {
      o.n = parse_integer(a, value(), 1, std::numeric_limits<int32_t>::max());
      have_n = true;
    } else if (a == "--kernel") {
      o.kernel = value();
    } else if (a == "--name") {
      o.name = value();
    } else if (a == "--runs") {
      o.runs = static_cast<int>(parse_integer(a, value(), 1, 1000000));
    } else if (a == "--warmup") {
      o.warmup = static_cast<int>(parse_integer(a, value(), 0, 1000000));
    } else if (a == "--no-timing") {
      o.timing = false;
    } else if (a == "--spmmc-only") {
      o.spmmc_only = true;
    } else if (a == "--dense-limit") {
      o.dense_limit_mib = parse_integer(a, value(), 0, std::numeric_limits<int32_t>::max());
    } else if (a == "--json") {
      o.json = value();
    } else if (a == "--label") {
      o.label = value();
    } else if (a == "--nvcc-seconds") {
      o.nvcc_seconds = parse_real(a, value());
    } else if (a == "--dtype") {
      const std::string& v = value();
      if (!parse_dtype(v, o.dtype))
        usage_error(fmt::format("--dtype: unknown type '{}' (expected fp32, fp16, bf16 or tf32)", v));
    } else if (a == "--device-info") {
      o.device_info = true;
    } else {
      usage_error(fmt::format("unknown argument '{}'", a));
    }
  }
  if (o.help || o.device_info) return o;
  if (o.matrix.empty()) usage_error("--matrix FILE is required");
  if (!have_n) usage_error("--n N is required");
  if (o.kernel.empty()) usage_error("--kernel libNAME.so is required");
  if (o.name.empty()) usage_error("--name NAME is required");
  return o;
}

Csr load_matrix(const BenchOptions& options) {
  try {
    Csr a = read_matrix_file(options.matrix, options.read).csr;
    round_values_to_dtype(a, options.dtype, options.matrix);
    return a;
  } catch (const UserError& e) {
    throw BenchFailure(static_cast<int>(e.code()), format_diagnostic(e));
  }
}

uint64_t b_seed_for(uint64_t a_seed) { return splitmix64(a_seed ^ 0x5eed0fb0000000bull); }

std::vector<float> make_dense_b(int64_t k, int64_t n, uint64_t seed) {
  std::vector<float> b(static_cast<size_t>(k * n));
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j)
      b[static_cast<size_t>(i * n + j)] =
          synthesize_value(ValueKind::kUniform, seed, static_cast<int32_t>(i), static_cast<int32_t>(j));
  return b;
}

std::vector<int32_t> rows_longest_first(const Csr& a) {
  std::vector<int32_t> rows(static_cast<size_t>(a.rows));
  for (int32_t r = 0; r < a.rows; ++r) rows[static_cast<size_t>(r)] = r;
  std::stable_sort(rows.begin(), rows.end(),
                   [&](int32_t x, int32_t y) { return a.row_length(x) > a.row_length(y); });
  return rows;
}

std::vector<float> dense_row_major(const Csr& a) {
  std::vector<float> d(static_cast<size_t>(a.rows) * static_cast<size_t>(a.cols), 0.0f);
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p)
      d[static_cast<size_t>(r) * static_cast<size_t>(a.cols) + static_cast<size_t>(a.col_idx[p])] = a.values[p];
  return d;
}

Check check_result(const std::vector<float>& got, const std::vector<double>& want) {
  Check c;
  for (float x : got)
    if (!std::isfinite(x)) ++c.non_finite;
  c.rel_error = c.non_finite > 0 ? std::numeric_limits<double>::infinity()
                                 : relative_frobenius_error(got.data(), want.data(), static_cast<int64_t>(got.size()));
  c.passed = c.non_finite == 0 && c.rel_error < kTolerance;
  return c;
}

Check check_half_result(const std::vector<uint16_t>& got, DType dtype, const std::vector<double>& want,
                        const std::vector<double>& bound) {
  std::vector<float> values(got.size());
  for (size_t i = 0; i < got.size(); ++i) values[i] = from_half_bits(got[i], dtype);
  return check_bounded_result(values, want, bound);
}

bool checked_by_bound(DType dtype) { return dtype != DType::kFp32; }

Check check_bounded_result(const std::vector<float>& values, const std::vector<double>& want, const std::vector<double>& bound) {
  Check c;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      ++c.non_finite;
      continue;
    }
    c.max_bound_ratio = std::max(c.max_bound_ratio, std::fabs(values[i] - want[i]) / bound[i]);
  }
  c.rel_error = c.non_finite > 0 ? std::numeric_limits<double>::infinity()
                                 : relative_frobenius_error(values.data(), want.data(), static_cast<int64_t>(values.size()));
  if (c.non_finite > 0) c.max_bound_ratio = std::numeric_limits<double>::infinity();
  c.passed = c.non_finite == 0 && c.max_bound_ratio <= 1.0;
  return c;
}

TimingStats summarize(std::vector<float> ms) {
  std::sort(ms.begin(), ms.end());
  const size_t count = ms.size();
  auto rank = [&](double q) {  // nearest rank, 1-based ceil(q * count)
    size_t r = static_cast<size_t>(std::ceil(q * static_cast<double>(count)));
    r = std::clamp<size_t>(r, 1, count);
    return static_cast<double>(ms[r - 1]);
  };
  TimingStats t;
  t.runs = static_cast<int>(count);
  t.min_ms = ms.front();
  t.p20_ms = rank(0.2);
  t.p80_ms = rank(0.8);
  t.median_ms = count % 2 == 1 ? ms[count / 2] : 0.5 * (static_cast<double>(ms[count / 2 - 1]) + ms[count / 2]);
  return t;
}

std::optional<BestPeer> best_sparse_peer(const BenchResult& r) {
  std::optional<BestPeer> best;
  if (r.cusparse_best) {
    const auto& alg = r.cusparse[*r.cusparse_best];
    if (alg.timing) best = BestPeer{"cuSPARSE " + alg.name, alg.timing->median_ms};
  }
  const bool sputnik_ok = r.sputnik_status == "ok" || r.sputnik_status == "reads C with beta=0";
  if (sputnik_ok && r.sputnik_timing && (!best || r.sputnik_timing->median_ms < best->ms))
    best = BestPeer{"Sputnik", r.sputnik_timing->median_ms};
  return best;
}

double useful_tflops(int64_t nnz, int64_t n, double ms) {
  return 2.0 * static_cast<double>(nnz) * static_cast<double>(n) / (ms * 1e-3) / 1e12;
}

const char* dense_gemm_name(DType dtype) {
  switch (dtype) {
    case DType::kFp16: return "HGEMM";
    case DType::kBf16: return "BF16 GEMM";
    case DType::kTf32: return "TF32 GEMM";
    case DType::kFp32: break;
  }
  return "SGEMM";
}

std::string cusparse_math(DType dtype) {
  switch (dtype) {
    case DType::kFp16:
    case DType::kBf16: return fmt::format("{} A, B and C, CUDA_R_32F compute", dtype_name(dtype));
    case DType::kTf32:
      return "FP32: float32 A, B and C, CUDA_R_32F compute (cuSPARSE's SpMM has no TF32 compute type); given A and B "
             "rounded to tf32, so it multiplies what the tf32 kernel multiplies";
    case DType::kFp32: break;
  }
  return "FP32: float32 A, B and C, CUDA_R_32F compute";
}

std::string dense_gemm_math(DType dtype) {
  switch (dtype) {
    case DType::kFp16:
    case DType::kBf16:
      return fmt::format("{}: cublasGemmEx of {} A, B and C, CUBLAS_COMPUTE_32F (tensor cores)", dense_gemm_name(dtype),
                         dtype_name(dtype));
    case DType::kTf32:
      return "TF32 GEMM: cublasGemmEx of float32 A, B and C (A and B rounded to tf32), CUBLAS_COMPUTE_32F_FAST_TF32 "
             "(TF32 tensor cores)";
    case DType::kFp32: break;
  }
  return "FP32: cublasGemmEx CUBLAS_COMPUTE_32F, CUBLAS_DEFAULT_MATH (no TF32)";
}

void decide_pass(BenchResult& r) {
  std::vector<std::string> failures;
  const bool bounded = checked_by_bound(r.dtype);
  auto describe = [bounded](const Check& c) {
    return c.non_finite > 0 ? fmt::format("{} NaN/Inf left in C", c.non_finite)
           : bounded        ? fmt::format("an error {:.3g}x its bound (docs/design/precision.md)", c.max_bound_ratio)
                            : fmt::format("relative error {:.3g} >= {:.0e}", c.rel_error, kTolerance);
  };
  if (!r.spmmc_check.passed) failures.push_back("spmmc: " + describe(r.spmmc_check));
  if (r.spmmc_checked_after_timing && !r.spmmc_check_after_timing.passed)
    failures.push_back("spmmc after timing: " + describe(r.spmmc_check_after_timing));
  // A baseline that computes a wrong result is excluded from the comparison and noted; it does
  // not fail the case, which checks spmmc.
  std::vector<std::string> notes;
  for (const auto& alg : r.cusparse)
    if (alg.status == "wrong-result") notes.push_back("cuSPARSE " + alg.name + " excluded: " + describe(alg.check));
  if (r.sgemm_check && !r.sgemm_check->passed)
    notes.push_back(std::string(dense_gemm_name(r.dtype)) + " excluded: " + describe(*r.sgemm_check));
  if (r.sputnik_status == "wrong-result" && r.sputnik_check)
    notes.push_back("Sputnik excluded: " + describe(*r.sputnik_check));
  if (r.sputnik_status.rfind("failed", 0) == 0) notes.push_back("Sputnik excluded: " + r.sputnik_status);
  r.passed = failures.empty();
  r.failure.clear();
  for (const auto& f : failures) r.failure += (r.failure.empty() ? "" : "; ") + f;
  for (const auto& n : notes) r.failure += (r.failure.empty() ? "note: " : "; note: ") + n;
}

std::string result_line(const BenchResult& r) {
  const std::optional<double> spmmc_ms = median_of(r.spmmc_timing);
  std::optional<double> cusparse_ms;
  std::string cusparse_alg = "-";
  if (r.cusparse_best) {
    cusparse_ms = median_of(r.cusparse[*r.cusparse_best].timing);
    cusparse_alg = r.cusparse[*r.cusparse_best].name;
  }
  const std::optional<double> sgemm_ms = median_of(r.sgemm_timing);
  const std::optional<double> sputnik_ms = median_of(r.sputnik_timing);
  const std::string sputnik_text = sputnik_ms                        ? ms_text(sputnik_ms)
                                   : r.sputnik_status.empty()        ? std::string("-")
                                   : r.sputnik_status.rfind("skipped", 0) == 0 ? std::string("skipped")
                                   : r.sputnik_status.rfind("failed", 0) == 0  ? std::string("failed")
                                                                               : "- (" + r.sputnik_status + ")";
  std::string line = fmt::format(
      "{} {} M={} K={} n={} nnz={} tile={}x{} dtype={} | spmmc {} | cuSPARSE {} ({}) | Sputnik {} | {} {}",
      r.passed ? "PASS" : "FAIL", r.matrix, r.m, r.k, r.n, r.nnz, r.m1, r.n1, dtype_name(r.dtype), ms_text(spmmc_ms),
      ms_text(cusparse_ms), cusparse_alg, sputnik_text, dense_gemm_name(r.dtype), ms_text(sgemm_ms));
  const std::optional<BestPeer> peer = best_sparse_peer(r);
  if (auto s = ratio(cusparse_ms, spmmc_ms)) line += fmt::format(" | x{:.2f} vs cuSPARSE", *s);
  if (auto s = ratio(sputnik_ms, spmmc_ms)) line += fmt::format(" x{:.2f} vs Sputnik", *s);
  if (peer)
    if (auto s = ratio(peer->ms, spmmc_ms)) line += fmt::format(" x{:.2f} vs best peer", *s);
  if (auto s = ratio(sgemm_ms, spmmc_ms)) line += fmt::format(" x{:.2f} vs {}", *s, dense_gemm_name(r.dtype));
  if (spmmc_ms) line += fmt::format(" | {:.2f} useful TFLOP/s", useful_tflops(r.nnz, r.n, *spmmc_ms));
  line += fmt::format(" | err spmmc {:.2e}", r.spmmc_check.rel_error);
  if (r.cusparse_best) line += fmt::format(" cuSPARSE {:.2e}", r.cusparse[*r.cusparse_best].check.rel_error);
  if (r.sputnik_check) line += fmt::format(" Sputnik {:.2e}", r.sputnik_check->rel_error);
  if (checked_by_bound(r.dtype)) {
    line += fmt::format(" | error/bound spmmc {:.3f}", r.spmmc_check.max_bound_ratio);
    if (r.cusparse_best) line += fmt::format(" cuSPARSE {:.3f}", r.cusparse[*r.cusparse_best].check.max_bound_ratio);
    if (r.sgemm_check) line += fmt::format(" {} {:.3f}", dense_gemm_name(r.dtype), r.sgemm_check->max_bound_ratio);
  }
  if (!r.failure.empty()) line += " | " + r.failure;
  return line;
}

void append_json(const std::string& path, const BenchResult& r) {
  using nlohmann::json;
  const std::optional<double> spmmc_ms = median_of(r.spmmc_timing);
  std::optional<double> cusparse_ms, cusparse_error;
  json cusparse_alg = nullptr;
  if (r.cusparse_best) {
    cusparse_ms = median_of(r.cusparse[*r.cusparse_best].timing);
    cusparse_error = r.cusparse[*r.cusparse_best].check.rel_error;
    cusparse_alg = r.cusparse[*r.cusparse_best].name;
  }
  const std::optional<double> sgemm_ms = median_of(r.sgemm_timing);
  const std::optional<double> sputnik_ms = median_of(r.sputnik_timing);
  const std::optional<BestPeer> peer = best_sparse_peer(r);
  const std::optional<double> peer_ms = peer ? std::optional<double>(peer->ms) : std::nullopt;
  auto tflops = [&](const std::optional<double>& ms) -> std::optional<double> {
    if (!ms || *ms <= 0) return std::nullopt;
    return useful_tflops(r.nnz, r.n, *ms);
  };
  json algorithms = json::array();
  for (const auto& a : r.cusparse)
    algorithms.push_back({{"alg", a.name},
                          {"status", a.status},
                          {"error", optional_number(a.status == "unsupported" ? std::nullopt
                                                                               : std::optional<double>(a.check.rel_error))},
                          {"ms", stats_json(a.timing)}});
  json j = {
      {"matrix", r.matrix},
      {"label", r.label},
      {"name", r.kernel_name},
      {"device", r.device},
      {"M", r.m},
      {"K", r.k},
      {"n", r.n},
      {"nnz", r.nnz},
      {"tile", fmt::format("{}x{}", r.m1, r.n1)},
      {"m1", r.m1},
      {"n1", r.n1},
      {"reorder", r.reorder},
      {"spmmc_ms", optional_number(spmmc_ms)},
      {"spmmc_timing", stats_json(r.spmmc_timing)},
      {"cusparse_ms", optional_number(cusparse_ms)},
      {"cusparse_alg", cusparse_alg},
      {"cusparse_algorithms", algorithms},
      {"sgemm_ms", optional_number(sgemm_ms)},
      {"sgemm_timing", stats_json(r.sgemm_timing)},
      {"sgemm_math", dense_gemm_math(r.dtype)},
      {"dense_gemm", dense_gemm_name(r.dtype)},
      {"cusparse_math", cusparse_math(r.dtype)},
      {"dtype", dtype_name(r.dtype)},
      {"spmmc_bound_ratio", optional_number(checked_by_bound(r.dtype) ? std::optional<double>(r.spmmc_check.max_bound_ratio)
                                                                      : std::nullopt)},
      {"cusparse_bound_ratio",
       optional_number(checked_by_bound(r.dtype) && r.cusparse_best
                           ? std::optional<double>(r.cusparse[*r.cusparse_best].check.max_bound_ratio)
                           : std::nullopt)},
      {"sgemm_bound_ratio",
       optional_number(checked_by_bound(r.dtype) && r.sgemm_check ? std::optional<double>(r.sgemm_check->max_bound_ratio)
                                                                  : std::nullopt)},
      {"sgemm_note", r.sgemm_note},
      {"sputnik_ms", optional_number(sputnik_ms)},
      {"sputnik_timing", stats_json(r.sputnik_timing)},
      {"sputnik_status", r.sputnik_status},
      {"sputnik_row_order", "rows by length, longest first"},
      {"best_peer", peer ? json(peer->name) : json(nullptr)},
      {"best_peer_ms", optional_number(peer_ms)},
      {"speedup_vs_cusparse", optional_number(ratio(cusparse_ms, spmmc_ms))},
      {"speedup_vs_sputnik", optional_number(ratio(sputnik_ms, spmmc_ms))},
      {"speedup_vs_best_peer", optional_number(ratio(peer_ms, spmmc_ms))},
      {"speedup_vs_sgemm", optional_number(ratio(sgemm_ms, spmmc_ms))},
      {"spmmc_tflops", optional_number(tflops(spmmc_ms))},
      {"cusparse_tflops", optional_number(tflops(cusparse_ms))},
      {"sputnik_tflops", optional_number(tflops(sputnik_ms))},
      {"best_peer_tflops", optional_number(tflops(peer_ms))},
      {"sgemm_tflops_useful", optional_number(tflops(sgemm_ms))},
      {"spmmc_error", optional_number(r.spmmc_check.rel_error)},
      {"spmmc_non_finite", r.spmmc_check.non_finite},
      {"spmmc_error_after_timing",
       optional_number(r.spmmc_checked_after_timing ? std::optional<double>(r.spmmc_check_after_timing.rel_error)
                                                    : std::nullopt)},
      {"cusparse_error", optional_number(cusparse_error)},
      {"sgemm_error", optional_number(r.sgemm_check ? std::optional<double>(r.sgemm_check->rel_error) : std::nullopt)},
      {"sputnik_error",
       optional_number(r.sputnik_check ? std::optional<double>(r.sputnik_check->rel_error) : std::nullopt)},
      {"spmmc_only", r.spmmc_only},
      {"tolerance", kTolerance},
      {"pass", r.passed},
      {"failure", r.failure},
      {"nvcc_seconds", optional_number(r.nvcc_seconds)},
      {"runs", r.runs},
      {"warmup", r.warmup},
      {"l2_flush_bytes", r.l2_flush_bytes},
  };
  std::ofstream out(path, std::ios::app);
  if (!out) throw BenchFailure(kExitCantCreate, fmt::format("{}: cannot open for appending: {}", path, std::strerror(errno)));
  out << j.dump() << '\n';
  out.flush();
  if (!out) throw BenchFailure(kExitIoError, fmt::format("{}: write failed", path));
}

}  // namespace spmmc::gpu_bench
