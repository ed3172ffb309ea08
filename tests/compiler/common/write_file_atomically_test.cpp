#include "compiler/common/write_file_atomically.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "tests/test_util.h"

namespace spmmc {
namespace {

namespace fs = std::filesystem;
using test::expect_user_error;

// The names in `dir`, sorted.
std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

void write_text(std::ostream& out, const std::string& text) { out << text; }

TEST_CASE("atomic write: creates, replaces, leaves no temporary file", "[write][atomic]") {
  test::TempDir dir;
  const std::string path = (dir.path / "out.txt").string();
  write_file_atomically(path, [](std::ostream& out) { write_text(out, "first\n"); });
  CHECK(test::read_file(path) == "first\n");
  write_file_atomically(path, [](std::ostream& out) {
    for (int i = 0; i < 300000; ++i) out << i << '\n';  // several MB: the buffer is flushed many times
  });
  const std::string big = test::read_file(path);
  CHECK(big.substr(0, 6) == "0\n1\n2\n");
  CHECK(big.size() == 1988890);
  CHECK(listing(dir.path) == std::vector<std::string>{"out.txt"});
  // A new file gets 0666 less the umask; a replaced file keeps its mode.
  const mode_t mask = ::umask(022);
  ::umask(mask);
  struct stat st;
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == (0666 & ~mask));
  REQUIRE(::chmod(path.c_str(), 0640) == 0);
  write_file_atomically(path, [](std::ostream& out) { write_text(out, "second\n"); });
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0640);
  CHECK(test::read_file(path) == "second\n");
}

TEST_CASE("atomic write: a missing directory is kCantCreate and creates nothing", "[write][atomic][errors]") {
  test::TempDir dir;
  const std::string path = (dir.path / "missing" / "out.txt").string();
  bool called = false;
  const UserError e = expect_user_error([&] {
    write_file_atomically(path, [&](std::ostream& out) { called = true; write_text(out, "x"); });
  });
  CHECK(e.code() == ExitCode::kCantCreate);
  CHECK(e.where().file == path);
  CHECK_THAT(e.message(), Catch::Contains("No such file or directory"));
  CHECK(!called);
  CHECK(listing(dir.path).empty());
  // A directory in the way is kCantCreate too.
  fs::create_directory(dir.path / "sub");
  CHECK(expect_user_error([&] {
          write_file_atomically((dir.path / "sub").string(), [](std::ostream& out) { write_text(out, "x"); });
        }).code() == ExitCode::kCantCreate);
  CHECK(listing(dir.path) == std::vector<std::string>{"sub"});
}

TEST_CASE("atomic write: a failed write is kIoError and leaves the old file alone", "[write][atomic][errors]") {
  test::TempDir dir;
  const std::string path = (dir.path / "out.txt").string();
  test::write_file(path, "old\n");
  const UserError e = expect_user_error([&] {
    write_file_atomically(path, [](std::ostream& out) {
      write_text(out, std::string(3 << 20, 'x'));  // reaches the temporary file
      out.setstate(std::ios::badbit);              // and then the writer fails
    });
  });
  CHECK(e.code() == ExitCode::kIoError);
  CHECK(test::read_file(path) == "old\n");
  CHECK(listing(dir.path) == std::vector<std::string>{"out.txt"});

  // An exception from the writer passes through unchanged, after the cleanup.
  const UserError refused = expect_user_error([&] {
    write_file_atomically(path, [](std::ostream& out) {
      write_text(out, "partial");
      fail_usage("refused");
    });
  });
  CHECK(refused.code() == ExitCode::kUsage);
  CHECK(refused.message() == "refused");
  CHECK(test::read_file(path) == "old\n");
  CHECK(listing(dir.path) == std::vector<std::string>{"out.txt"});
}

TEST_CASE("atomic write: a full device is kIoError", "[write][atomic][errors]") {
  if (!fs::exists("/dev/full")) {
    WARN("skipped: /dev/full is absent");
    return;
  }
  const UserError e = expect_user_error([&] {
    write_file_atomically("/dev/full", [](std::ostream& out) { write_text(out, std::string(100, 'x')); });
  });
  CHECK(e.code() == ExitCode::kIoError);
  CHECK_THAT(e.message(), Catch::Contains("No space left on device"));
}

TEST_CASE("atomic write: a symbolic link is followed, the link stays", "[write][atomic]") {
  test::TempDir dir;
  test::write_file(dir.path / "target.txt", "old\n");
  fs::create_symlink("target.txt", dir.path / "link.txt");
  write_file_atomically((dir.path / "link.txt").string(), [](std::ostream& out) { write_text(out, "new\n"); });
  CHECK(fs::is_symlink(dir.path / "link.txt"));
  CHECK(test::read_file(dir.path / "target.txt") == "new\n");
  CHECK(listing(dir.path) == std::vector<std::string>{"link.txt", "target.txt"});
}

TEST_CASE("atomic write of a set: all files replaced, or none", "[write][atomic]") {
  test::TempDir dir;
  const std::string a = (dir.path / "k.cu").string(), b = (dir.path / "k.h").string(), c = (dir.path / "k.json").string();
  const auto text = [](const std::string& t) { return [t](std::ostream& out) { write_text(out, t); }; };
  write_files_atomically({{a, text("a1")}, {b, text("b1")}, {c, text("c1")}});
  CHECK(test::read_file(a) == "a1");
  CHECK(test::read_file(b) == "b1");
  CHECK(test::read_file(c) == "c1");
  CHECK(listing(dir.path) == std::vector<std::string>{"k.cu", "k.h", "k.json"});

  // The last writer fails after the first two are complete: neither of them is replaced.
  const UserError refused = expect_user_error([&] {
    write_files_atomically({{a, text("a2")}, {b, text("b2")}, {c, [](std::ostream& out) {
                              write_text(out, "partial");
                              fail_usage("refused");
                            }}});
  });
  CHECK(refused.message() == "refused");
  // The last file cannot be created: the same, naming it.
  fs::remove(c);
  fs::create_directories(fs::path(c) / "inside");
  const UserError blocked = expect_user_error([&] { write_files_atomically({{a, text("a3")}, {b, text("b3")}, {c, text("c3")}}); });
  CHECK(blocked.code() == ExitCode::kCantCreate);
  CHECK(blocked.where().file == c);
  CHECK(test::read_file(a) == "a1");
  CHECK(test::read_file(b) == "b1");
  CHECK(listing(dir.path) == std::vector<std::string>{"k.cu", "k.h", "k.json"});
}

TEST_CASE("atomic write: the temporary files of a target are recognised by name", "[write][atomic]") {
  test::TempDir dir;
  // A writer that never finishes leaves its temporary file for a look.
  std::string seen;
  expect_user_error([&] {
    write_file_atomically((dir.path / "k.cu").string(), [&](std::ostream& out) {
      write_text(out, "x");
      seen = listing(dir.path).at(0);
      fail_usage("stop");
    });
  });
  CHECK(is_temporary_file_of(seen, "k.cu"));
  CHECK(!is_temporary_file_of(seen, "k.h"));
  CHECK(!is_temporary_file_of(seen, "k"));
  CHECK(is_temporary_file_of(".k.cu.tmp-0123456789ab", "k.cu"));
  for (const char* other : {".k.cu.tmp-0123456789AB", ".k.cu.tmp-0123456789a", ".k.cu.tmp-0123456789abc", "k.cu.tmp-0123456789ab",
                            ".kk.cu.tmp-0123456789ab", ".k.cu.tmp-notmine12345", ".k.cu", "k.cu"})
    CHECK(!is_temporary_file_of(other, "k.cu"));
}

}  // namespace
}  // namespace spmmc
