// OutputSetLock (compiler/common/output_set_lock.h): one holder at a time, across processes; the lock
// file exists only while held; taking it removes the stale temporary files of the set and
// nothing else.
#include "compiler/common/output_set_lock.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "tests/test_util.h"

namespace spmmc {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST_CASE("output set lock: the lock file exists while held, stale temporaries of the set go", "[lock]") {
  test::TempDir dir;
  const std::vector<std::string> stale = {".k.cu.tmp-0123456789ab", ".k.h.tmp-00000000beef", ".k.json.tmp-ffffffffffff"};
  const std::vector<std::string> kept = {"k.cu", ".k.d.tmp-0123456789ab", ".k.cu.tmp-0123456789AB", ".k2.cu.tmp-0123456789ab",
                                         ".layer.cu.tmp-0123456789ab", "notes.txt"};
  for (const auto& name : stale) test::write_file(dir.path / name, "killed while writing");
  for (const auto& name : kept) test::write_file(dir.path / name, "not the lock's");
  {
    const OutputSetLock lock(dir.path, "k", {".cu", ".h", ".json"});
    CHECK(lock.exclusive());
    CHECK(lock.path() == dir.path / ".k.lock");
    CHECK(fs::exists(lock.path()));
    std::vector<std::string> removed;
    for (const auto& path : lock.removed_temporaries()) removed.push_back(path.filename().string());
    std::sort(removed.begin(), removed.end());
    std::vector<std::string> expected = stale;
    std::sort(expected.begin(), expected.end());
    CHECK(removed == expected);
  }
  std::vector<std::string> expected = kept;
  std::sort(expected.begin(), expected.end());
  CHECK(listing(dir.path) == expected);
}

TEST_CASE("output set lock: a second process waits for the holder", "[lock]") {
  test::TempDir dir;
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const auto hold = std::chrono::milliseconds(400);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    int code = 0;
    {
      const OutputSetLock lock(dir.path, "k", {".cu"});
      code = lock.exclusive() ? 0 : 1;
      (void)!::write(ready[1], "x", 1);
      std::this_thread::sleep_for(hold);
    }
    ::_exit(code);
  }
  ::close(ready[1]);
  char byte = 0;
  REQUIRE(::read(ready[0], &byte, 1) == 1);
  ::close(ready[0]);
  const auto start = std::chrono::steady_clock::now();
  {
    const OutputSetLock lock(dir.path, "k", {".cu"});
    const auto waited = std::chrono::steady_clock::now() - start;
    CHECK(waited >= hold / 2);
    // The holder has finished: its lock file was removed, this one is new.
    CHECK(fs::exists(lock.path()));
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(listing(dir.path).empty());
}

}  // namespace
}  // namespace spmmc
