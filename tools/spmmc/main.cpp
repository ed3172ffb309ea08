// spmmc: the command line. Parses the subcommand, runs it, prints any error once, and maps
// it to a <sysexits.h> exit code.
#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "compiler/common/remove_on_signal.h"
#include "tools/spmmc/cli.h"
#include "tools/spmmc/commands.h"
#include "tuner/measure_worker.h"

namespace {

using spmmc::ExitCode;

const std::vector<spmmc::cli::Command>& commands() {
  static const std::vector<spmmc::cli::Command> all = {
      spmmc::cli::inspect_command(),
      spmmc::cli::gen_command(),
      spmmc::cli::plan_command(),
      spmmc::cli::compile_command(),
#ifdef SPMMC_WITH_VERIFY
      spmmc::cli::verify_command(),
#endif
      spmmc::cli::collect_command(),
      spmmc::cli::train_ranker_command(),
  };
  return all;
}

std::string main_help() {
  std::string out =
      "usage: spmmc <command> [options]\n\n"
      "spmmc compiles C = A*B for a sparse matrix A known ahead of time into CUDA.\n\ncommands:\n";
  for (const auto& c : commands()) out += fmt::format("  {:<14}{}\n", c.name, c.summary);
  out += "\n  --help, -h    show this help ('spmmc <command> --help' for a command)\n"
         "  --version     print the version\n\n"
         "exit codes: 0 ok, 64 usage, 65 bad input data, 66 missing input, 69 no GPU, 70 internal error,\n"
         "            73 cannot create output, 74 I/O error\n";
  return out;
}

bool is_help(const std::string& word) { return word == "--help" || word == "-h" || word == "help"; }

int run(int argc, char** argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  if (words.empty()) {
    std::fputs(main_help().c_str(), stderr);
    return static_cast<int>(ExitCode::kUsage);
  }
  if (is_help(words[0]) && words.size() == 1) {
    std::fputs(main_help().c_str(), stdout);
    return 0;
  }
  // Hidden: the measuring worker the tuner starts (tuner/measure_worker.h); not for users.
  if (words[0] == "__measure-worker" && words.size() == 1) return spmmc::run_measure_worker(std::cin, std::cout);
  if (words[0] == "--version") {
    std::printf("spmmc %s\n", SPMMC_VERSION);
    return 0;
  }
  if (words[0] == "help") words.erase(words.begin()), words.push_back("--help");
  for (const auto& command : commands()) {
    if (command.name != words[0]) continue;
    const std::vector<std::string> rest(words.begin() + 1, words.end());
    for (const auto& w : rest) {
      if (w == "--") break;
      if (w == "--help" || w == "-h") {
        std::fputs(spmmc::cli::command_help(command).c_str(), stdout);
        return 0;
      }
    }
    return command.run(spmmc::cli::parse_args(command, rest));
  }
  spmmc::fail_usage("unknown command '{}' (see 'spmmc --help')", words[0]);
}

}  // namespace

int main(int argc, char** argv) {
  // SIGINT, SIGTERM, SIGHUP remove the temporary files being written before spmmc dies; SIGXFSZ
  // (ulimit -f) becomes a write error, exit 74.
  spmmc::remove_files_on_termination_signals();
  int code;
  try {
    code = run(argc, argv);
  } catch (const spmmc::UserError& e) {
    spmmc::cli::print_error(e.where().str(), e.message());
    return static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {
    spmmc::cli::print_error("", "out of memory");
    return static_cast<int>(ExitCode::kSoftware);
  } catch (const std::exception& e) {
    spmmc::cli::print_error("", fmt::format("{} (this is a bug in spmmc; please report it)", e.what()));
    return static_cast<int>(ExitCode::kSoftware);
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    spmmc::cli::print_error("", "cannot write to standard output");
    return static_cast<int>(ExitCode::kIoError);
  }
  return code;
}
