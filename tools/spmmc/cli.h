// Command-line plumbing of the spmmc tool: subcommands, option parsing, help text, and
// printing diagnostics. The commands themselves live in *_command.cpp, one per file.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/common/diagnostics.h"
#include "compiler/formats/read_options.h"
#include "compiler/planning/plan_tiles.h"
#include "compiler/planning/target.h"

namespace spmmc::cli {

struct OptionSpec {
  std::string name;     // "--n"; a short alias may follow after '|': "--output|-o"
  std::string metavar;  // "N"; empty for a flag
  std::string help;
};

class Args {
 public:
  std::vector<std::string> positional;
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  // The option's value, or nullopt.
  std::optional<std::string> get(const std::string& name) const;
  std::string get_or(const std::string& name, const std::string& fallback) const;
  // A comma-separated value's items, in order, empty ones kept ("a,,b" -> {"a", "", "b"}).
  std::vector<std::string> get_list(const std::string& name, const std::string& fallback) const;
  // Numeric values with range checks; a bad value is a usage error naming the option.
  int64_t get_int(const std::string& name, int64_t fallback, int64_t min, int64_t max) const;
  double get_double(const std::string& name, double fallback, double min, double max) const;
  uint64_t get_seed(const std::string& name) const;

  std::map<std::string, std::string> values_;  // canonical option name -> value ("" for flags)
};

struct Command {
  std::string name;
  std::string summary;   // one line for `spmmc --help`
  std::string usage;     // "spmmc inspect FILE [options]"
  std::string description;
  std::vector<OptionSpec> options;
  size_t min_positional = 0;
  size_t max_positional = 0;
  std::function<int(const Args&)> run;
};

// Parses argv after the subcommand name. --help is handled by the caller.
Args parse_args(const Command& command, const std::vector<std::string>& argv);

std::string command_help(const Command& command);

// The reader options shared by every command that reads a matrix.
std::vector<OptionSpec> read_option_specs();
ReadOptions read_options_from(const Args& args);

// The planning options shared by `plan` and `compile`: --target/--arch, --reorder, --th-row,
// --th-col. planning_options_from fills everything of PlanOptions but n.
std::vector<OptionSpec> planning_option_specs();
PlanOptions planning_options_from(const Args& args);
Target target_from(const Args& args);

// Prints "file:line: error: message" to stderr, in colour only on a terminal without NO_COLOR.
void print_error(const std::string& location, const std::string& message);
void print_warning(const std::string& message);

// True when stdout is a terminal (progress and tables may adapt).
bool stdout_is_terminal();

}  // namespace spmmc::cli
