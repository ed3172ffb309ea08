// What `spmmc compile` leaves in its output folder when runs overlap, fail or are interrupted
// (issue 11, defects 1 and 2): NAME.cu, NAME.h, NAME.json and NAME.nvcc-options always come from one run; a write
// that fails part-way (file size limit, a file that cannot be created) exits 74/73 with the old
// set intact and no temporary file; SIGINT and SIGTERM while writing remove the temporaries and
// the lock file and end spmmc by that signal (a shell reports 130 and 143); the temporaries of
// a run killed by SIGKILL are removed by the next run of the same NAME.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <regex>
#include <thread>

#include "tests/test_util.h"

extern char** environ;

namespace spmmc {
namespace {

namespace fs = std::filesystem;
using test::run_spmmc;

// A layer whose NAME.cu takes about 2 MB, so that writing it takes a while.
fs::path layer(const fs::path& dir, const std::string& file, int seed) {
  const fs::path path = dir / file;
  const auto r = run_spmmc({"gen", "uniform", "--rows", "200", "--cols", "200", "--sparsity", "0.5", "--seed",
                            std::to_string(seed), "-q", "-o", path.string()});
  REQUIRE(r.exit_code == 0);
  return path;
}

std::vector<std::string> compile_args(const fs::path& weights, const fs::path& out) {
  return {"compile", weights.string(), "--n", "64", "--name", "k", "-o", out.string(), "--tile", "8x64", "--quiet"};
}

// The shell command running spmmc with `args`.
std::string spmmc_command(const std::vector<std::string>& args) {
  const auto quote = [](const std::string& word) {
    std::string quoted = "'";
    for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
  };
  std::string command = quote(SPMMC_EXE);
  for (const std::string& arg : args) command += " " + quote(arg);
  return command;
}

// The names in `dir`, sorted.
std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A temporary file of write_file_atomically or the lock file of the set named k.
bool is_debris(const std::string& name) {
  static const std::regex debris(R"(\.k\.(cu|h|json)\.tmp-[0-9a-f]{12}|\.k\.lock)");
  return std::regex_match(name, debris);
}

std::vector<std::string> debris_in(const fs::path& dir) {
  std::vector<std::string> found;
  for (const std::string& name : listing(dir))
    if (is_debris(name)) found.push_back(name);
  return found;
}

// The weights' SHA-256 that each file of the set records ("" when absent).
struct SetShas {
  std::string cu, h, json;
};
SetShas shas(const fs::path& out) {
  const auto find = [](const std::string& text, const std::regex& pattern) {
    std::smatch m;
    return std::regex_search(text, m, pattern) ? m[1].str() : std::string();
  };
  const std::regex comment("weights SHA-256 ([0-9a-f]{64})");
  return {find(test::read_file(out / "k.cu"), comment), find(test::read_file(out / "k.h"), comment),
          find(test::read_file(out / "k.json"), std::regex("\"weights_sha256\": \"([0-9a-f]{64})\""))};
}

// Starts spmmc with `args`, stdout and stderr to `log`, the termination signals at their
// defaults (whatever the test runner does with them).
pid_t spawn_spmmc(const std::vector<std::string>& args, const fs::path& log) {
  std::vector<std::string> words = {SPMMC_EXE};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults, none;
  sigemptyset(&defaults);
  for (const int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&defaults, s);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, SPMMC_EXE, &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  REQUIRE(spawned == 0);
  return pid;
}

// True once `pid` has ended (it stays to be reaped by waitpid).
bool ended(pid_t pid) {
  siginfo_t info;
  info.si_pid = 0;
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

// Waits until spmmc, stuck on opening the FIFO out/k.h, holds the lock and has written the
// temporary file of k.cu. False after 60 s, or when spmmc ended before.
bool wait_for_temporary(pid_t pid, const fs::path& out) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && !ended(pid)) {
    const std::vector<std::string> found = debris_in(out);
    if (std::count(found.begin(), found.end(), ".k.lock") > 0 && found.size() >= 2) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// Sends `signal_number` to spmmc once it is writing (SIGKILL if it never gets there) and
// returns its wait status; `writing` says whether it got there.
int interrupt_while_writing(pid_t pid, const fs::path& out, int signal_number, bool& writing) {
  writing = wait_for_temporary(pid, out);
  ::kill(pid, writing ? signal_number : SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return status;
}

TEST_CASE("compile outputs: concurrent compiles of one NAME leave a set from one run", "[cli][compile][outputs]") {
  test::TempDir dir;
  const fs::path a = layer(dir.path, "a.mtx", 1), b = layer(dir.path, "b.mtx", 2);
  const fs::path out = dir.path / "out";
  // Six writers at once, three of each matrix, five times: every final set must be whole.
  std::string script;
  for (int i = 0; i < 6; ++i) {
    script += "(" + spmmc_command(compile_args(i % 2 ? b : a, out)) + " </dev/null 2>" + (dir.path / ("err" + std::to_string(i))).string() + "; echo $? >" +
              (dir.path / ("status" + std::to_string(i))).string() + ") &\n";
  }
  script += "wait\n";
  for (int round = 0; round < 5; ++round) {
    REQUIRE(std::system(script.c_str()) == 0);
    for (int i = 0; i < 6; ++i) {
      INFO("round " << round << ", writer " << i << ": " << test::read_file(dir.path / ("err" + std::to_string(i))));
      CHECK(test::read_file(dir.path / ("status" + std::to_string(i))) == "0\n");
    }
    const SetShas s = shas(out);
    INFO("round " << round);
    CHECK(s.cu.size() == 64);
    CHECK(s.cu == s.h);
    CHECK(s.cu == s.json);
    CHECK(listing(out) == std::vector<std::string>{"k.cu", "k.h", "k.json", "k.nvcc-options"});
  }
}

TEST_CASE("compile outputs: the file size limit is exit 74, the old set intact, no temporary", "[cli][compile][outputs]") {
  test::TempDir dir;
  const fs::path out = dir.path / "out";
  const auto first = run_spmmc(compile_args(layer(dir.path, "a.mtx", 1), out));
  REQUIRE(first.exit_code == 0);
  const std::string cu = test::read_file(out / "k.cu"), h = test::read_file(out / "k.h"), json = test::read_file(out / "k.json");
  // 64 blocks of 512 or 1024 bytes, whichever the shell counts: far below the 2 MB of k.cu.
  const auto r = run_spmmc(compile_args(layer(dir.path, "b.mtx", 2), out), "ulimit -f 64;");
  INFO(r.err);
  CHECK(r.exit_code == 74);
  CHECK_THAT(r.err, Catch::Contains((out / "k.cu").string() + ": error: write failed: File too large"));
  CHECK(listing(out) == std::vector<std::string>{"k.cu", "k.h", "k.json", "k.nvcc-options"});
  CHECK(test::read_file(out / "k.cu") == cu);
  CHECK(test::read_file(out / "k.h") == h);
  CHECK(test::read_file(out / "k.json") == json);
}

TEST_CASE("compile outputs: a file of the set that cannot be written leaves the others as they were", "[cli][compile][outputs]") {
  test::TempDir dir;
  const fs::path out = dir.path / "out";
  REQUIRE(run_spmmc(compile_args(layer(dir.path, "a.mtx", 1), out)).exit_code == 0);
  const std::string cu = test::read_file(out / "k.cu"), h = test::read_file(out / "k.h");
  // k.json, written last, is a folder now: k.cu and k.h must not be replaced either.
  fs::remove(out / "k.json");
  fs::create_directories(out / "k.json" / "inside");
  const auto r = run_spmmc(compile_args(layer(dir.path, "b.mtx", 2), out));
  INFO(r.err);
  CHECK(r.exit_code == 73);
  CHECK_THAT(r.err, Catch::Contains((out / "k.json").string() + ": error: cannot create"));
  CHECK(test::read_file(out / "k.cu") == cu);
  CHECK(test::read_file(out / "k.h") == h);
  CHECK(listing(out) == std::vector<std::string>{"k.cu", "k.h", "k.json", "k.nvcc-options"});
}

TEST_CASE("compile outputs: SIGINT and SIGTERM while writing remove the temporaries", "[cli][compile][outputs][signals]") {
  test::TempDir dir;
  const fs::path out = dir.path / "out";
  const fs::path a = layer(dir.path, "a.mtx", 1), b = layer(dir.path, "b.mtx", 2);
  REQUIRE(run_spmmc(compile_args(a, out)).exit_code == 0);
  const std::string cu = test::read_file(out / "k.cu"), json = test::read_file(out / "k.json");
  // k.h a FIFO without a reader: spmmc blocks opening it, after k.cu's temporary file is written.
  fs::remove(out / "k.h");
  REQUIRE(::mkfifo((out / "k.h").c_str(), 0644) == 0);
  for (const int signal_number : {SIGINT, SIGTERM}) {
    INFO("signal " << signal_number);
    const pid_t pid = spawn_spmmc(compile_args(b, out), dir.path / "log");
    bool writing = false;
    const int status = interrupt_while_writing(pid, out, signal_number, writing);
    INFO(test::read_file(dir.path / "log"));
    REQUIRE(writing);
    // Ended by the signal itself (a shell reports 128 + N: 130, 143), nothing left behind.
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == signal_number);
    CHECK(debris_in(out).empty());
    CHECK(listing(out) == std::vector<std::string>{"k.cu", "k.h", "k.json", "k.nvcc-options"});
    CHECK(test::read_file(out / "k.cu") == cu);
    CHECK(test::read_file(out / "k.json") == json);
  }
}

TEST_CASE("compile outputs: the next run removes the temporaries of a killed one", "[cli][compile][outputs][signals]") {
  test::TempDir dir;
  const fs::path out = dir.path / "out";
  const fs::path a = layer(dir.path, "a.mtx", 1);
  fs::create_directories(out);
  REQUIRE(::mkfifo((out / "k.h").c_str(), 0644) == 0);
  const pid_t pid = spawn_spmmc(compile_args(a, out), dir.path / "log");
  bool writing = false;
  interrupt_while_writing(pid, out, SIGKILL, writing);
  INFO(test::read_file(dir.path / "log"));
  REQUIRE(writing);
  // SIGKILL cannot be caught: the temporary file and the lock file stay.
  CHECK(debris_in(out).size() >= 2);
  // Files that only look alike, and those of another NAME, are not the next run's to remove.
  const std::vector<std::string> others = {".k.cu.tmp-notmine", ".k.cu.tmp-0123456789AB", ".kk.cu.tmp-0123456789ab",
                                           ".other.cu.tmp-0123456789ab", "k.cu.tmp-0123456789ab"};
  for (const std::string& name : others) test::write_file(out / name, "someone else's");
  fs::remove(out / "k.h");
  const auto r = run_spmmc(compile_args(a, out));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> expected = {"k.cu", "k.h", "k.json", "k.nvcc-options"};
  expected.insert(expected.end(), others.begin(), others.end());
  std::sort(expected.begin(), expected.end());
  CHECK(listing(out) == expected);
  const SetShas s = shas(out);
  CHECK(s.cu == s.h);
  CHECK(s.cu == s.json);
}

}  // namespace
}  // namespace spmmc
