// Writing a set of files (NAME.cu, NAME.h, NAME.json, ...) as one: every file is replaced
// atomically by write_file_atomically, and an OutputSetLock held from the first write to the last
// rename makes concurrent writers of the same set take turns, so the set always comes from one
// writer.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace spmmc {

class RemovedOnSignal;

// An exclusive advisory lock (flock) on the output set DIR/NAME.<extension>, taken through the
// lock file DIR/.NAME.lock.
//
// The constructor creates the lock file if needed and waits while another process holds it.
// Once it holds the lock, it removes the temporary files that write_file_atomically left for
// DIR/NAME.<extension> (each of `extensions`, e.g. ".cu") when a process was killed while writing
// them: every writer of the set holds the lock, so none of those files is in use.
//
// The destructor removes the lock file and then releases the lock. A waiting process that
// finds its lock file gone (or replaced) starts over on the new one, so the lock stays exclusive.
// A process interrupted by SIGINT, SIGTERM or SIGHUP while holding the lock removes the lock file
// (RemovedOnSignal, compiler/common/remove_on_signal.h). One killed otherwise (SIGKILL, a crash) leaves
// DIR/.NAME.lock behind (the kernel releases the lock itself); the next writer takes it over and
// removes it.
//
// Errors are UserErrors: ExitCode::kCantCreate (73) naming the lock file when it cannot be
// created or opened (no permission, a read-only file system). On a file system without flock
// support (ENOLCK, EOPNOTSUPP: some network file systems) the set is written without the lock
// and no temporary file is removed; exclusive() then says so.
class OutputSetLock {
 public:
  OutputSetLock(const std::filesystem::path& dir, const std::string& name, const std::vector<std::string>& extensions);
  ~OutputSetLock();
  OutputSetLock(const OutputSetLock&) = delete;
  OutputSetLock& operator=(const OutputSetLock&) = delete;

  // False when the file system refused the lock (the set was not protected).
  bool exclusive() const { return exclusive_; }
  // The lock file, DIR/.NAME.lock.
  const std::filesystem::path& path() const { return path_; }
  // The stale temporary files the constructor removed.
  const std::vector<std::filesystem::path>& removed_temporaries() const { return removed_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  bool exclusive_ = false;
  std::vector<std::filesystem::path> removed_;
  std::unique_ptr<RemovedOnSignal> remove_on_signal_;
};

}  // namespace spmmc
