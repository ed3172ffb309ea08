// spmmc compile --depfile: the Makefile-style rule naming NAME.cu and the files it was made from
// (weights, target descriptions), with paths made absolute and escaped for Make/Ninja/CMake.
#include <filesystem>

#include "tests/test_util.h"

namespace spmmc {
namespace {

namespace fs = std::filesystem;
using test::run_spmmc;

// A folder whose name needs every escape a depfile has: space, '#', '$'.
struct Layout {
  test::TempDir dir;
  fs::path root = dir.path / "a b#c$d";
  fs::path models = root / "models";
  fs::path weights = root / "w.mtx";
  fs::path out = root / "out";
  std::string env;
  Layout() {
    fs::create_directories(models / "targets");
    for (const char* name : {"h100", "l4"})
      fs::copy_file(fs::path(SPMMC_SOURCE_MODELS_DIR) / "targets" / (std::string(name) + ".json"),
                    models / "targets" / (std::string(name) + ".json"));
    env = "SPMMC_MODELS_DIR='" + models.string() + "'";
    REQUIRE(run_spmmc({"gen", "uniform", "--rows", "8", "--cols", "8", "--sparsity", "0.5", "-q", "-o", weights.string()})
                .exit_code == 0);
  }
};

std::string escaped(const fs::path& p) {
  std::string out;
  for (char ch : p.string()) {
    if (ch == ' ' || ch == '#') out += '\\';
    if (ch == '$') out += '$';
    out += ch;
  }
  return out;
}

TEST_CASE("depfile: NAME.cu depends on the weights and the target description, escaped", "[cli][compile][depfile]") {
  Layout l;
  const fs::path depfile = l.root / "k.d";
  const auto r = run_spmmc({"compile", l.weights.string(), "--n", "32", "--name", "k", "-o", l.out.string(), "--quiet",
                            "--depfile", depfile.string()},
                           l.env);
  REQUIRE(r.exit_code == 0);
  CHECK(test::read_file(depfile) == escaped(l.out / "k.cu") + ": \\\n  " + escaped(l.weights) + " \\\n  " +
                                         escaped(l.models / "targets" / "h100.json") + "\n");
}

TEST_CASE("depfile: --target FILE lists that file, --arch every description", "[cli][compile][depfile]") {
  Layout l;
  const fs::path depfile = l.root / "k.d";
  const fs::path mine = l.root / "mine.json";
  fs::copy_file(l.models / "targets" / "l4.json", mine);
  REQUIRE(run_spmmc({"compile", l.weights.string(), "--n", "32", "--name", "k", "-o", l.out.string(), "--quiet", "--target",
                     mine.string(), "--depfile", depfile.string()},
                    l.env)
              .exit_code == 0);
  const std::string with_target = test::read_file(depfile);
  CHECK(with_target.find(escaped(mine)) != std::string::npos);
  CHECK(with_target.find("h100.json") == std::string::npos);

  REQUIRE(run_spmmc({"compile", l.weights.string(), "--n", "32", "--name", "k", "-o", l.out.string(), "--quiet", "--arch",
                     "sm_89", "--depfile", depfile.string()},
                    l.env)
              .exit_code == 0);
  const std::string with_arch = test::read_file(depfile);
  CHECK(with_arch.find(escaped(l.models / "targets" / "h100.json")) != std::string::npos);
  CHECK(with_arch.find(escaped(l.models / "targets" / "l4.json")) != std::string::npos);
}

TEST_CASE("depfile: a depfile that cannot be created is exit 73, naming it", "[cli][compile][depfile]") {
  Layout l;
  const fs::path depfile = l.root / "no such folder" / "k.d";
  const auto r = run_spmmc({"compile", l.weights.string(), "--n", "32", "--name", "k", "-o", l.out.string(), "--quiet",
                            "--depfile", depfile.string()},
                           l.env);
  CHECK(r.exit_code == 73);
  CHECK(r.err.find(depfile.string()) != std::string::npos);
}

}  // namespace
}  // namespace spmmc
