#include "tools/spmmc/cli.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "compiler/common/text_scanner.h"
#include "compiler/formats/read_matrix.h"

namespace spmmc::cli {
namespace {

// "--output|-o" -> {"--output", "-o"}
std::vector<std::string> spellings(const std::string& name) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t bar = name.find('|', start);
    out.push_back(name.substr(start, bar - start));
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  return out;
}

const OptionSpec* find_option(const Command& command, const std::string& spelled) {
  for (const OptionSpec& spec : command.options)
    for (const std::string& s : spellings(spec.name))
      if (s == spelled) return &spec;
  return nullptr;
}

std::string canonical(const OptionSpec& spec) { return spellings(spec.name).front(); }

bool colour_on(FILE* stream) {
  const char* no_colour = std::getenv("NO_COLOR");
  if (no_colour && *no_colour) return false;
  const char* term = std::getenv("TERM");
  if (term && std::strcmp(term, "dumb") == 0) return false;
  return isatty(fileno(stream)) != 0;
}

}  // namespace

std::optional<std::string> Args::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string Args::get_or(const std::string& name, const std::string& fallback) const {
  return get(name).value_or(fallback);
}

std::vector<std::string> Args::get_list(const std::string& name, const std::string& fallback) const {
  std::vector<std::string> items;
  for (std::stringstream list(get_or(name, fallback)); list.good();) {
    std::string item;
    std::getline(list, item, ',');
    items.push_back(item);
  }
  return items;
}

int64_t Args::get_int(const std::string& name, int64_t fallback, int64_t min, int64_t max) const {
  const auto text = get(name);
  if (!text) return fallback;
  int64_t v;
  if (!parse_int64(*text, v)) fail_usage("{} expects an integer, got '{}'", name, *text);
  if (v < min || v > max) fail_usage("{} must be in [{}, {}], got {}", name, min, max, v);
  return v;
}

double Args::get_double(const std::string& name, double fallback, double min, double max) const {
  const auto text = get(name);
  if (!text) return fallback;
  double v;
  if (!parse_double(*text, v) || !std::isfinite(v)) fail_usage("{} expects a number, got '{}'", name, *text);
  if (v < min || v > max) fail_usage("{} must be in [{}, {}], got {}", name, min, max, v);
  return v;
}

uint64_t Args::get_seed(const std::string& name) const {
  return static_cast<uint64_t>(get_int(name, 0, 0, std::numeric_limits<int64_t>::max()));
}

Args parse_args(const Command& command, const std::vector<std::string>& argv) {
  Args args;
  bool options_done = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    if (options_done || word.size() < 2 || word[0] != '-') {
      args.positional.push_back(word);
      continue;
    }
    if (word == "--") {
      options_done = true;
      continue;
    }
    const size_t eq = word.find('=');
    const std::string spelled = word.substr(0, eq);
    const OptionSpec* spec = find_option(command, spelled);
    if (!spec) fail_usage("unknown option '{}' for 'spmmc {}' (see 'spmmc {} --help')", spelled, command.name, command.name);
    std::string value;
    if (spec->metavar.empty()) {
      if (eq != std::string::npos) fail_usage("option '{}' takes no value", spelled);
    } else if (eq != std::string::npos) {
      value = word.substr(eq + 1);
    } else {
      if (i + 1 >= argv.size()) fail_usage("option '{}' needs a value ({})", spelled, spec->metavar);
      value = argv[++i];
    }
    args.values_[canonical(*spec)] = value;
  }
  if (args.positional.size() < command.min_positional || args.positional.size() > command.max_positional) {
    fail_usage("'spmmc {}' takes {} argument{} ({} given); usage: {}", command.name,
               command.min_positional == command.max_positional
                   ? fmt::format("{}", command.min_positional)
                   : fmt::format("{} to {}", command.min_positional, command.max_positional),
               command.max_positional == 1 ? "" : "s", args.positional.size(), command.usage);
  }
  return args;
}

std::string command_help(const Command& command) {
  std::string out = fmt::format("usage: {}\n\n{}\n", command.usage, command.description);
  if (!command.options.empty()) {
    out += "\noptions:\n";
    for (const OptionSpec& spec : command.options) {
      std::string left = "  ";
      const auto names = spellings(spec.name);
      for (size_t k = 0; k < names.size(); ++k) left += (k ? ", " : "") + names[k];
      if (!spec.metavar.empty()) left += " " + spec.metavar;
      out += left.size() < 26 ? fmt::format("{:<26}{}\n", left, spec.help) : fmt::format("{}\n{:<26}{}\n", left, "", spec.help);
    }
  }
  out += fmt::format("{:<26}{}\n", "  --help, -h", "show this help");
  return out;
}

std::vector<OptionSpec> read_option_specs() {
  return {
      {"--format", "FMT", "input format: mtx, smtx, npy, npz, safetensors (default: from the extension)"},
      {"--values", "KIND", "values for topology-only input: normal, uniform, ones (default: normal for .smtx, ones for pattern .mtx)"},
      {"--seed", "S", "seed for synthesised values (default 0)"},
      {"--threshold", "T", "dense input: drop weights with |w| <= T (default 0: zeros only)"},
      {"--tensor", "NAME", "safetensors: the tensor to read"},
  };
}

ReadOptions read_options_from(const Args& args) {
  ReadOptions options;
  if (auto f = args.get("--format")) {
    options.format = parse_format_name(*f);
    if (!options.format) fail_usage("--format: unknown format '{}' (expected mtx, smtx, npy, npz or safetensors)", *f);
  }
  if (auto v = args.get("--values")) {
    options.values = parse_value_kind(*v);
    if (!options.values) fail_usage("--values: unknown kind '{}' (expected normal, uniform or ones)", *v);
  }
  options.seed = args.get_seed("--seed");
  options.threshold = args.get_double("--threshold", 0.0, 0.0, std::numeric_limits<double>::max());
  options.tensor = args.get_or("--tensor", "");
  return options;
}

std::vector<OptionSpec> planning_option_specs() {
  return {
      {"--target", "T", "GPU description: a name in models/targets (default h100) or a .json path"},
      {"--arch", "SM", "pick the target by architecture, e.g. sm_90"},
      {"--reorder", "M", "row reordering: overlap (LO-SpMM Algorithm 1, default), none, length, grow (fewest columns per tile, no balance limit)"},
      {"--th-row", "X", "TH_row: largest COV of non-zeros across A-tiles (default 0.25)"},
      {"--th-col", "X", "TH_col: largest padded fraction of B columns (default 0.25)"},
  };
}

PlanOptions planning_options_from(const Args& args) {
  PlanOptions options;
  if (auto r = args.get("--reorder")) {
    const auto method = parse_reorder_method(*r);
    if (!method) fail_usage("--reorder: unknown method '{}' (expected overlap, none, length or grow)", *r);
    options.reorder = *method;
  }
  options.constraints.max_row_cov = args.get_double("--th-row", 0.25, 0.0, 100.0);
  options.constraints.max_col_waste = args.get_double("--th-col", 0.25, 0.0, 1.0);
  return options;
}

Target target_from(const Args& args) {
  if (args.has("--target") && args.has("--arch")) fail_usage("give --target or --arch, not both");
  return args.has("--arch") ? target_for_arch(*args.get("--arch")) : load_target(args.get_or("--target", "h100"));
}

void print_error(const std::string& location, const std::string& message) {
  const bool colour = colour_on(stderr);
  std::string line;
  if (!location.empty()) line += colour ? "\033[1m" + location + ":\033[0m " : location + ": ";
  line += colour ? "\033[1;31merror:\033[0m " : "error: ";
  line += message;
  std::fprintf(stderr, "%s\n", line.c_str());
}

void print_warning(const std::string& message) {
  const bool colour = colour_on(stderr);
  std::fprintf(stderr, "%s%s\n", colour ? "\033[1;35mwarning:\033[0m " : "warning: ", message.c_str());
}

bool stdout_is_terminal() { return isatty(fileno(stdout)) != 0; }

}  // namespace spmmc::cli
