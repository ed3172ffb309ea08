// spmmc gen KIND ... -o FILE: writes a seeded synthetic matrix (generate_matrix.h).
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "compiler/common/text_scanner.h"
#include "compiler/formats/generate_matrix.h"
#include "compiler/formats/read_matrix.h"
#include "compiler/formats/write_matrix.h"
#include "tools/spmmc/commands.h"

namespace spmmc::cli {
namespace {

// Options that only some kinds take, and those kinds.
struct KindOption {
  const char* name;
  GeneratorKind kind;
};
constexpr KindOption kKindOptions[] = {
    {"--scale", GeneratorKind::kRmat},
    {"--edge-factor", GeneratorKind::kRmat},
    {"--abcd", GeneratorKind::kRmat},
    {"--patterns", GeneratorKind::kPatterns},
    {"--block", GeneratorKind::kBlocks},
    {"--bandwidth", GeneratorKind::kBanded},
};

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (;;) {
    const size_t at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

std::array<double, 4> parse_abcd(const std::string& text) {
  const auto parts = split(text, ',');
  std::array<double, 4> abcd{};
  if (parts.size() != 4) fail_usage("--abcd expects four comma-separated probabilities a,b,c,d, got '{}'", text);
  for (size_t i = 0; i < 4; ++i)
    if (!parse_double(parts[i], abcd[i])) fail_usage("--abcd: '{}' is not a number (in '{}')", parts[i], text);
  return abcd;
}

void parse_block(const std::string& text, GeneratorOptions& options) {
  const auto parts = split(text, 'x');
  if (parts.size() != 2 || !parse_int64(parts[0], options.block_rows) || !parse_int64(parts[1], options.block_cols))
    fail_usage("--block expects ROWSxCOLS such as 4x4, got '{}'", text);
}

GeneratorOptions options_from(const Args& args) {
  const std::string& kind_name = args.positional.at(0);
  GeneratorOptions o;
  const auto kind = parse_generator_kind(kind_name);
  if (!kind) fail_usage("unknown generator '{}' (expected uniform, magnitude, rmat, patterns, blocks or banded)", kind_name);
  o.kind = *kind;
  for (const KindOption& k : kKindOptions)
    if (args.has(k.name) && k.kind != o.kind)
      fail_usage("{} applies only to the {} generator, not to {}", k.name, generator_kind_name(k.kind), kind_name);
  if (o.kind == GeneratorKind::kRmat) {
    if (!args.has("--scale")) fail_usage("rmat needs --scale N (the matrix is 2^N x 2^N)");
    if (args.has("--sparsity")) fail_usage("--sparsity does not apply to rmat: its density comes from --edge-factor");
  } else {
    if (!args.has("--rows") || !args.has("--cols")) fail_usage("{} needs --rows M and --cols K", kind_name);
  }
  if (o.kind == GeneratorKind::kBanded && !args.has("--bandwidth"))
    fail_usage("banded needs --bandwidth W (the non-zeros lie within W columns of the diagonal)");
  // Range checks with the real limits happen in generate_matrix; these only keep values in type.
  o.rows = args.get_int("--rows", 0, 1, kMaxIndex);
  o.cols = args.get_int("--cols", 0, 1, kMaxIndex);
  // banded: --sparsity drops in-band cells, and by default none (the full band).
  o.sparsity = args.get_double("--sparsity", o.kind == GeneratorKind::kBanded ? 0.0 : o.sparsity, 0.0, 1.0);
  o.seed = args.get_seed("--seed");
  if (auto v = args.get("--values")) {
    const auto values = parse_value_kind(*v);
    if (!values) fail_usage("--values: unknown kind '{}' (expected normal, uniform or ones)", *v);
    o.values = *values;
  }
  o.scale = static_cast<int>(args.get_int("--scale", 0, 0, 30));
  o.edge_factor = args.get_double("--edge-factor", o.edge_factor, 0.0, 1e9);
  if (auto abcd = args.get("--abcd")) o.abcd = parse_abcd(*abcd);
  o.patterns = args.get_int("--patterns", o.patterns, 1, kMaxIndex);
  if (auto block = args.get("--block")) parse_block(*block, o);
  // Any integer here: generate_matrix says why a bandwidth outside [0, K) is refused.
  o.bandwidth = args.get_int("--bandwidth", o.bandwidth, std::numeric_limits<int64_t>::min(),
                             std::numeric_limits<int64_t>::max());
  return o;
}

// The command line that regenerates the matrix, every parameter explicit (the output file left
// out, so that the same matrix gives the same bytes wherever it is written).
std::string reproducing_command(const GeneratorOptions& o) {
  std::string out = fmt::format("spmmc gen {}", generator_kind_name(o.kind));
  if (o.kind == GeneratorKind::kRmat) {
    out += fmt::format(" --scale {} --edge-factor {} --abcd {},{},{},{}", o.scale, o.edge_factor, o.abcd[0], o.abcd[1],
                       o.abcd[2], o.abcd[3]);
  } else {
    out += fmt::format(" --rows {} --cols {} --sparsity {}", o.rows, o.cols, o.sparsity);
  }
  if (o.kind == GeneratorKind::kPatterns) out += fmt::format(" --patterns {}", o.patterns);
  if (o.kind == GeneratorKind::kBlocks) out += fmt::format(" --block {}x{}", o.block_rows, o.block_cols);
  if (o.kind == GeneratorKind::kBanded) out += fmt::format(" --bandwidth {}", o.bandwidth);
  out += fmt::format(" --seed {} --values {}", o.seed, value_kind_name(o.values));
  return out;
}

std::string header_comment(const GeneratorOptions& o) {
  std::string values = o.kind == GeneratorKind::kMagnitude
                           ? fmt::format("the kept Gaussian weights, synthesised: normal(0,1), seed {}", o.seed)
                           : describe_synthesis(o.values, o.seed);
  return fmt::format("generated by: {}\nvalues: {}", reproducing_command(o), values);
}

MatrixFormat output_format(const Args& args, const std::string& path) {
  if (auto f = args.get("--format")) {
    const auto format = parse_format_name(*f);
    if (!format) fail_usage("--format: unknown format '{}' (spmmc gen writes mtx, smtx or npy)", *f);
    return *format;
  }
  if (const auto format = format_from_extension(path)) return *format;
  fail_usage("cannot tell the output format from '{}': use a .mtx, .smtx or .npy extension, or --format", path);
}

int run_gen(const Args& args) {
  const auto start = std::chrono::steady_clock::now();
  const GeneratorOptions options = options_from(args);
  const auto path = args.get("--output");
  if (!path) fail_usage("spmmc gen needs -o FILE (the file to write)");
  const MatrixFormat format = output_format(args, *path);

  const Csr csr = generate_matrix(options);
  const auto generated = std::chrono::steady_clock::now();
  write_matrix(csr, *path, format, header_comment(options));
  const auto written = std::chrono::steady_clock::now();

  if (!args.has("--quiet")) {
    const double cells = static_cast<double>(csr.rows) * static_cast<double>(csr.cols);
    struct stat st;
    const std::string size = ::stat(path->c_str(), &st) == 0 && S_ISREG(st.st_mode)
                                 ? fmt::format(", {:.1f} MB", static_cast<double>(st.st_size) / 1e6)
                                 : std::string();
    std::fprintf(stderr, "%s\n",
                 fmt::format("spmmc gen: wrote {} ({}{}): {} x {}, {} non-zeros, sparsity {:.6f}; generated in {:.2f} s, "
                             "written in {:.2f} s",
                             *path, format_name(format), size, csr.rows, csr.cols, csr.nnz(),
                             1.0 - static_cast<double>(csr.nnz()) / cells,
                             std::chrono::duration<double>(generated - start).count(),
                             std::chrono::duration<double>(written - generated).count())
                     .c_str());
  }
  return 0;
}

}  // namespace

Command gen_command() {
  Command c;
  c.name = "gen";
  c.summary = "write a seeded synthetic sparse matrix (uniform, magnitude, rmat, patterns, blocks, banded)";
  c.usage = "spmmc gen KIND --rows M --cols K [--sparsity S] [--seed S] [--values V] [kind options] -o FILE";
  c.description =
      "Generates a sparse matrix of the given KIND and writes it to FILE (.mtx, .smtx or .npy). The result\n"
      "depends only on the options: the same command gives byte-identical files on every platform.\n"
      "\n"
      "kinds:\n"
      "  uniform    uniform random pruning: exactly round((1-S)*M*K) non-zeros at distinct positions\n"
      "             drawn uniformly at random.\n"
      "  magnitude  magnitude pruning of Gaussian weights: of the dense M x K weights\n"
      "             w(r,c) = normal(seed, r, c) (the --values normal synthesis), the round((1-S)*M*K)\n"
      "             largest |w| are kept (ties: the earlier cell in row-major order). Reading the .smtx\n"
      "             form back with --values normal --seed S gives exactly the same matrix. M*K <= 2^31.\n"
      "  rmat       R-MAT graph on n = 2^scale nodes (--scale, required): round(F*n) edges (--edge-factor F,\n"
      "             default 16), each placed by recursively choosing quadrant a, b, c or d of the adjacency\n"
      "             matrix with the --abcd probabilities (default 0.57,0.19,0.19,0.05; must sum to 1).\n"
      "             Repeated edges are kept once. --rows/--cols may be omitted; --sparsity does not apply.\n"
      "  patterns   --patterns P (default 8) random column patterns of round((1-S)*K) columns each; every\n"
      "             row takes one of them at random, so rows with equal patterns are scattered.\n"
      "  blocks     the matrix cut into --block RxC blocks (default 4x4, edge blocks clipped); a uniformly\n"
      "             random round((1-S)*blocks) of them are kept and dense, the rest are zero.\n"
      "  banded     FEM/stencil-like band (--bandwidth W, required, 0 <= W < K): row r's non-zeros lie in the\n"
      "             columns c with |c - c'| <= W (clipped to the matrix) around the scaled diagonal\n"
      "             c' = min(round(r*K/M), K-1) (c' = r when square); a uniformly random round((1-S)*T)\n"
      "             of the T in-band cells are kept (--sparsity, default 0: the full band).\n"
      "\n"
      "Values (all kinds but magnitude) are synthesised per (row, col) with --values normal|uniform|ones\n"
      "and --seed, as the readers do for .smtx: a .smtx written here reads back identically with the\n"
      "same --values and --seed. The .mtx header records the command that regenerates the matrix.\n"
      "The file is written atomically (a temporary file renamed into place). One line on stderr\n"
      "says what was written, unless --quiet.";
  c.options = {
      {"--rows", "M", "rows (rmat: may be left out, 2^scale)"},
      {"--cols", "K", "columns (rmat: may be left out, 2^scale)"},
      {"--sparsity", "S", "fraction of zeros in [0, 1), default 0.9 (patterns: of each pattern; blocks: of blocks; "
                          "banded: of the band, default 0)"},
      {"--seed", "S", "seed of the topology and the values (default 0)"},
      {"--values", "KIND", "normal, uniform or ones (default normal; magnitude: normal only)"},
      {"--scale", "N", "rmat: 2^N nodes"},
      {"--edge-factor", "F", "rmat: F * 2^N edges are drawn (default 16)"},
      {"--abcd", "A,B,C,D", "rmat: quadrant probabilities (default 0.57,0.19,0.19,0.05)"},
      {"--patterns", "P", "patterns: number of distinct row patterns (default 8)"},
      {"--block", "RxC", "blocks: block shape (default 4x4)"},
      {"--bandwidth", "W", "banded: columns on each side of the diagonal, 0 <= W < K (required)"},
      {"--output|-o", "FILE", "the file to write (required)"},
      {"--format", "FMT", "mtx, smtx or npy (default: from FILE's extension)"},
      {"--quiet|-q", "", "print nothing on success"},
  };
  c.min_positional = c.max_positional = 1;
  c.run = run_gen;
  return c;
}

}  // namespace spmmc::cli
