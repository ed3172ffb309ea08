// The spmmc executable end to end: help, version, exit codes, diagnostics, inspect.
#include <nlohmann/json.hpp>

#include "tests/test_util.h"

namespace spmmc {
namespace {

using test::run_spmmc;

const char* kSmall = "%%MatrixMarket matrix coordinate real general\n3 4 3\n1 2 1.5\n3 1 -2\n3 4 1\n";

TEST_CASE("cli: --help, --version and usage errors", "[cli]") {
  const auto help = run_spmmc({"--help"});
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Catch::Contains("inspect"));
  const auto version = run_spmmc({"--version"});
  CHECK(version.exit_code == 0);
  CHECK(version.out == std::string("spmmc ") + SPMMC_VERSION + "\n");
  const auto inspect_help = run_spmmc({"inspect", "--help"});
  CHECK(inspect_help.exit_code == 0);
  CHECK_THAT(inspect_help.out, Catch::Contains("--json"));
  CHECK(run_spmmc({}).exit_code == 64);
  const auto unknown = run_spmmc({"frobnicate"});
  CHECK(unknown.exit_code == 64);
  CHECK(unknown.err == "error: unknown command 'frobnicate' (see 'spmmc --help')\n");
  CHECK(run_spmmc({"inspect"}).exit_code == 64);
  CHECK(run_spmmc({"inspect", "a.mtx", "--bogus"}).exit_code == 64);
  CHECK(run_spmmc({"inspect", "a.mtx", "--seed", "x"}).exit_code == 64);
  CHECK(run_spmmc({"inspect", "a.mtx", "--values", "gaussian"}).exit_code == 64);
  CHECK(run_spmmc({"inspect", "a.unknown"}).exit_code == 64);
}

TEST_CASE("cli: inspect reports shape, nnz and values", "[cli]") {
  test::TempDir dir;
  test::write_file(dir.path / "a.mtx", kSmall);
  const auto text = run_spmmc({"inspect", (dir.path / "a.mtx").string()});
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("3 x 4"));
  CHECK_THAT(text.out, Catch::Contains("nnz           3"));
  CHECK_THAT(text.out, Catch::Contains("load time"));

  const auto json = run_spmmc({"inspect", (dir.path / "a.mtx").string(), "--json"});
  REQUIRE(json.exit_code == 0);
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j["schema"] == "spmmc.inspect/1");
  CHECK(j["rows"] == 3);
  CHECK(j["cols"] == 4);
  CHECK(j["nnz"] == 3);
  CHECK(j["row_lengths"]["empty"] == 1);
  CHECK(j["col_lengths"]["empty"] == 1);
  CHECK(j["values"]["origin"] == "file");
  CHECK(j["load_seconds"].get<double>() >= 0.0);
}

TEST_CASE("cli: errors exit 65/66 with file:line diagnostics, no colour unless a terminal", "[cli][errors]") {
  test::TempDir dir;
  test::write_file(dir.path / "bad.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n");
  const std::string bad = (dir.path / "bad.mtx").string();
  const auto r = run_spmmc({"inspect", bad});
  CHECK(r.exit_code == 65);
  CHECK(r.err == bad + ":3: error: row index 3 out of range [1, 2]\n");
  CHECK(r.out.empty());

  const auto missing = run_spmmc({"inspect", (dir.path / "nope.mtx").string()});
  CHECK(missing.exit_code == 66);
  CHECK_THAT(missing.err, Catch::Contains("No such file or directory"));
  CHECK(run_spmmc({"inspect", dir.path.string(), "--format", "mtx"}).exit_code == 66);

  // --threshold is for dense input only.
  test::write_file(dir.path / "a.mtx", kSmall);
  const auto threshold = run_spmmc({"inspect", (dir.path / "a.mtx").string(), "--threshold", "0.5"});
  CHECK(threshold.exit_code == 64);
  CHECK_THAT(threshold.err, Catch::Contains("dense input only"));

  // --format overrides the extension.
  test::write_file(dir.path / "a.txt", kSmall);
  CHECK(run_spmmc({"inspect", (dir.path / "a.txt").string(), "--format", "mtx"}).exit_code == 0);
}

}  // namespace
}  // namespace spmmc

namespace spmmc {
namespace {

// Runs spmmc under script(1) so that stderr is a terminal; returns what the terminal showed.
std::string run_on_terminal(const std::string& spmmc_args, const std::string& env) {
  test::TempDir dir;
  const std::string command = "env TERM=xterm " + env + " script -qec \"" + std::string(SPMMC_EXE) + " " + spmmc_args +
                              "\" /dev/null > " + (dir.path / "tty").string() + " 2>&1 </dev/null";
  if (std::system(command.c_str()) == -1) return {};
  return test::read_file(dir.path / "tty");
}

TEST_CASE("cli: colour on a terminal, never with NO_COLOR", "[cli]") {
  if (std::system("command -v script >/dev/null 2>&1") != 0) {
    WARN("skipped: script(1) is not installed, cannot fake a terminal");
    return;
  }
  const std::string coloured = run_on_terminal("frobnicate", "");
  CHECK_THAT(coloured, Catch::Contains("\033[1;31merror:\033[0m"));
  const std::string plain = run_on_terminal("frobnicate", "NO_COLOR=1");
  CHECK_THAT(plain, Catch::Contains("error: unknown command"));
  CHECK(plain.find('\033') == std::string::npos);
}

TEST_CASE("cli: compile shows its stages on a terminal, clears them, and says nothing of them with --quiet", "[cli]") {
  if (std::system("command -v script >/dev/null 2>&1") != 0) {
    WARN("skipped: script(1) is not installed, cannot fake a terminal");
    return;
  }
  test::TempDir dir;
  test::write_file(dir.path / "a.mtx", kSmall);
  const std::string args = "compile " + (dir.path / "a.mtx").string() + " --n 8 --name k -o " + (dir.path / "out").string();
  const std::string shown = run_on_terminal(args, "");
  for (const char* stage : {"spmmc compile: reading a.mtx, ", "spmmc compile: planning the tile space of 3 non-zeros, ",
                            "spmmc compile: choosing the family, ", "spmmc compile: emitting the ", "spmmc compile: writing 0 MB, "})
    CHECK_THAT(shown, Catch::Contains(stage));
  // The last stage's line is cleared before the summary.
  CHECK_THAT(shown, Catch::Contains("\r\033[Kspmmc compile: wrote "));
  const std::string quiet = run_on_terminal(args + " --quiet", "");
  CHECK(quiet.find("spmmc compile") == std::string::npos);
  // Not a terminal: no stages (the summary only).
  const auto piped = run_spmmc({"compile", (dir.path / "a.mtx").string(), "--n", "8", "--name", "k", "-o", (dir.path / "out").string()});
  CHECK(piped.exit_code == 0);
  CHECK(piped.err.find("reading") == std::string::npos);
  CHECK(piped.err.find('\r') == std::string::npos);
}

}  // namespace
}  // namespace spmmc
