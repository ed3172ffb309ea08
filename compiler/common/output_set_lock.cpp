#include "compiler/common/output_set_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "compiler/common/diagnostics.h"
#include "compiler/common/remove_on_signal.h"
#include "compiler/common/write_file_atomically.h"

namespace spmmc {
namespace {

[[noreturn]] void fail_lock(const std::filesystem::path& path, const char* what, int error) {
  throw UserError(ExitCode::kCantCreate, SourceLocation::whole(path.string()),
                  fmt::format("{}: {}", what, std::strerror(error)));
}

// True when `fd` is still the file named `path`: a holder that removed the lock file before
// releasing it, or a newer one created since, means the lock just taken guards nothing.
bool still_named(int fd, const std::filesystem::path& path) {
  struct stat by_fd, by_name;
  if (::fstat(fd, &by_fd) != 0 || ::stat(path.c_str(), &by_name) != 0) return false;
  return by_fd.st_dev == by_name.st_dev && by_fd.st_ino == by_name.st_ino;
}

// Removes the temporary files of DIR/NAME<extension> that killed writers left behind.
std::vector<std::filesystem::path> remove_stale_temporaries(const std::filesystem::path& dir, const std::string& name,
                                                            const std::vector<std::string>& extensions) {
  std::vector<std::filesystem::path> removed;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string file = it->path().filename().string();
    for (const std::string& extension : extensions) {
      if (!is_temporary_file_of(file, name + extension)) continue;
      std::error_code remove_ec;
      if (std::filesystem::remove(it->path(), remove_ec)) removed.push_back(it->path());
      break;
    }
  }
  return removed;
}

}  // namespace

OutputSetLock::OutputSetLock(const std::filesystem::path& dir, const std::string& name,
                             const std::vector<std::string>& extensions)
    : path_((dir.empty() ? std::filesystem::path(".") : dir) / ("." + name + ".lock")) {
  for (;;) {
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd < 0) fail_lock(path_, "cannot create the lock file", errno);
    int locked;
    do {
      locked = ::flock(fd, LOCK_EX);
    } while (locked != 0 && errno == EINTR);
    if (locked != 0) {
      const int error = errno;
      if (error == ENOLCK || error == EOPNOTSUPP || error == ENOTSUP || error == EINVAL) {
        // No locks here: write the set unprotected, and leave no lock file behind.
        ::close(fd);
        ::unlink(path_.c_str());
        break;
      }
      ::close(fd);
      fail_lock(path_, "cannot lock", error);
    }
    if (still_named(fd, path_)) {
      fd_ = fd;
      exclusive_ = true;
      // Interrupted while holding it (SIGINT, SIGTERM, SIGHUP), spmmc removes it like its temporaries.
      remove_on_signal_ = std::make_unique<RemovedOnSignal>(path_.string());
      break;
    }
    ::close(fd);  // the previous holder removed it: lock the current one
  }
  // Only a holder of the lock knows that no other writer is using them.
  if (exclusive_) removed_ = remove_stale_temporaries(dir.empty() ? std::filesystem::path(".") : dir, name, extensions);
}

OutputSetLock::~OutputSetLock() {
  if (fd_ < 0) return;
  remove_on_signal_.reset();
  // Removed while still held, so that nobody can lock this file and believe it guards the set.
  ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace spmmc
