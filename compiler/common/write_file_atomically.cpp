#include "compiler/common/write_file_atomically.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <streambuf>
#include <string_view>
#include <vector>

#include "compiler/common/diagnostics.h"
#include "compiler/common/remove_on_signal.h"
#include "compiler/common/synthesize_values.h"

namespace spmmc {
namespace {

constexpr size_t kBufferBytes = size_t{1} << 20;

[[noreturn]] void fail_create(const std::string& path, int error) {
  throw UserError(ExitCode::kCantCreate, SourceLocation::whole(path), fmt::format("cannot create: {}", std::strerror(error)));
}

[[noreturn]] void fail_io(const std::string& path, const std::string& what) {
  throw UserError(ExitCode::kIoError, SourceLocation::whole(path), what);
}

// A stream buffer onto a file descriptor with a large buffer. Remembers the first errno of a
// failed write; after it, every output operation fails (and the ostream turns bad).
class FdStreambuf : public std::streambuf {
 public:
  explicit FdStreambuf(int fd) : fd_(fd), buffer_(kBufferBytes) { reset_put_area(); }
  FdStreambuf(const FdStreambuf&) = delete;
  FdStreambuf& operator=(const FdStreambuf&) = delete;

  int error() const { return error_; }

 protected:
  int_type overflow(int_type ch) override {
    if (!flush_buffer()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }

  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n <= 0) return 0;
    const auto count = static_cast<size_t>(n);
    if (count <= static_cast<size_t>(epptr() - pptr())) {
      std::memcpy(pptr(), s, count);
      pbump(static_cast<int>(count));  // at most kBufferBytes
      return n;
    }
    if (!flush_buffer()) return 0;
    if (count >= buffer_.size()) return write_all(s, count) ? n : 0;
    std::memcpy(pptr(), s, count);
    pbump(static_cast<int>(count));
    return n;
  }

  int sync() override { return flush_buffer() ? 0 : -1; }

 private:
  void reset_put_area() { setp(buffer_.data(), buffer_.data() + buffer_.size()); }

  bool flush_buffer() {
    const auto pending = static_cast<size_t>(pptr() - pbase());
    const bool ok = write_all(pbase(), pending);
    reset_put_area();
    return ok;
  }

  bool write_all(const char* data, size_t size) {
    if (error_ != 0) return false;
    while (size > 0) {
      const ssize_t written = ::write(fd_, data, size);
      if (written < 0) {
        if (errno == EINTR) continue;
        error_ = errno;
        return false;
      }
      data += written;
      size -= static_cast<size_t>(written);
    }
    return true;
  }

  int fd_;
  std::vector<char> buffer_;
  int error_ = 0;
};

// Runs `write` on `fd` and checks that everything reached the file. Throws kIoError.
void write_through(int fd, const std::string& path, const std::function<void(std::ostream&)>& write, bool sync_to_disk) {
  FdStreambuf buffer(fd);
  std::ostream out(&buffer);
  write(out);
  out.flush();
  if (buffer.error() != 0) fail_io(path, fmt::format("write failed: {}", std::strerror(buffer.error())));
  if (!out) fail_io(path, "write failed: the output stream failed");
  if (sync_to_disk && ::fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
    fail_io(path, fmt::format("cannot flush to disk: {}", std::strerror(errno)));
}

// A special file (device, pipe) cannot be renamed over: write it in place.
void write_in_place(const std::string& path, const std::function<void(std::ostream&)>& write) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) fail_create(path, errno);
  try {
    write_through(fd, path, write, /*sync_to_disk=*/false);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) fail_io(path, fmt::format("write failed: {}", std::strerror(errno)));
}

constexpr size_t kMaxNameInTemporary = 200;
constexpr std::string_view kTemporaryInfix = ".tmp-";
constexpr size_t kTemporaryHexDigits = 12;

// ".<name>.tmp-<12 hex digits>" beside `target`; the name is cut so that it stays short.
std::string temporary_name(const std::filesystem::path& target, uint64_t attempt) {
  static std::atomic<uint64_t> counter{0};
  const uint64_t nanos = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  const uint64_t h = splitmix64(nanos ^ splitmix64((static_cast<uint64_t>(::getpid()) << 32) ^ counter++ ^ (attempt << 48)));
  std::string name = target.filename().string().substr(0, kMaxNameInTemporary);
  const std::filesystem::path dir = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  return (dir / fmt::format(".{}{}{:012x}", name, kTemporaryInfix, h & 0xFFFFFFFFFFFFull)).string();
}

void sync_directory(const std::filesystem::path& target) {
  const std::filesystem::path dir = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // best effort: the rename itself already happened
  (void)::fsync(fd);
  ::close(fd);
}

// Holds back SIGINT, SIGTERM and SIGHUP in this thread while it lives: they stay pending and
// arrive when it ends.
class TerminationSignalsHeld {
 public:
  TerminationSignalsHeld() {
    sigset_t held;
    sigemptyset(&held);
    for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&held, signal_number);
    ::pthread_sigmask(SIG_BLOCK, &held, &previous_);
  }
  ~TerminationSignalsHeld() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  TerminationSignalsHeld(const TerminationSignalsHeld&) = delete;
  TerminationSignalsHeld& operator=(const TerminationSignalsHeld&) = delete;

 private:
  sigset_t previous_;
};

// A file of a set written by write_files_atomically, waiting for its rename.
struct StagedFile {
  std::string path;                // as the caller named it: errors name it
  std::filesystem::path target;    // `path` with a symbolic link resolved: what the rename replaces
  std::string temp;                // the temporary file holding the new content; empty: none (yet)
  std::unique_ptr<RemovedOnSignal> remove_on_signal;  // `temp`, while it may exist
};

// Writes `write` to a new temporary file beside `staged.target` (fsynced, with the mode the
// target will have), or in place for a special file (then `staged.temp` stays empty). On an
// exception, `staged.temp` names the temporary file to remove, if one was created.
void stage(StagedFile& staged, const std::function<void(std::ostream&)>& write) {
  const std::string& path = staged.path;
  if (path.empty()) fail_usage("the output file name is empty");
  staged.target = path;
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    std::error_code ec;
    const std::filesystem::path resolved = std::filesystem::canonical(staged.target, ec);
    if (!ec) staged.target = resolved;  // a dangling link is replaced by the new file
  }
  bool keep_mode = false;
  mode_t mode = 0;
  if (::stat(staged.target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) fail_create(path, EISDIR);
    if (!S_ISREG(st.st_mode)) return write_in_place(path, write);
    keep_mode = true;
    mode = st.st_mode & 07777;
  }

  int fd = -1;
  for (uint64_t attempt = 0; fd < 0; ++attempt) {
    const std::string temp = temporary_name(staged.target, attempt);
    // Registered before it exists, so that SIGINT or SIGTERM at any moment leaves no temporary file.
    staged.remove_on_signal = std::make_unique<RemovedOnSignal>(temp);
    // 0666 before the umask, as any new file; O_EXCL so that an existing file is never reused.
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
      const int error = errno;
      staged.remove_on_signal.reset();
      if (error != EEXIST || attempt >= 100) fail_create(path, error);
    } else {
      staged.temp = temp;
    }
  }
  try {
    if (keep_mode && ::fchmod(fd, mode) != 0) fail_create(path, errno);
    write_through(fd, path, write, /*sync_to_disk=*/true);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) fail_io(path, fmt::format("write failed: {}", std::strerror(errno)));
}

}  // namespace

void write_files_atomically(const std::vector<FileToWrite>& files) {
  std::vector<StagedFile> staged(files.size());
  try {
    for (size_t i = 0; i < files.size(); ++i) {
      staged[i].path = files[i].path;
      stage(staged[i], files[i].write);
    }
    std::vector<std::filesystem::path> renamed;
    // The renames are one step for an interrupting signal: it arrives after the last of them, so
    // that the set is the old one or the new one, never a mix.
    const TerminationSignalsHeld held;
    for (StagedFile& file : staged) {
      if (file.temp.empty()) continue;  // written in place
      if (::rename(file.temp.c_str(), file.target.c_str()) != 0) fail_create(file.path, errno);
      file.temp.clear();
      file.remove_on_signal.reset();
      renamed.push_back(file.target);
    }
    for (size_t i = 0; i < renamed.size(); ++i)
      if (i == 0 || renamed[i].parent_path() != renamed[i - 1].parent_path()) sync_directory(renamed[i]);
  } catch (...) {
    for (const StagedFile& file : staged)
      if (!file.temp.empty()) ::unlink(file.temp.c_str());
    throw;
  }
}

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  write_files_atomically({FileToWrite{path, write}});
}

bool is_temporary_file_of(const std::string& file_name, const std::string& target_file_name) {
  if (target_file_name.empty() || target_file_name.size() > kMaxNameInTemporary) return false;
  const std::string prefix = "." + target_file_name + std::string(kTemporaryInfix);
  if (file_name.size() != prefix.size() + kTemporaryHexDigits || file_name.compare(0, prefix.size(), prefix) != 0) return false;
  for (size_t i = prefix.size(); i < file_name.size(); ++i)
    if (!std::isxdigit(static_cast<unsigned char>(file_name[i])) || std::isupper(static_cast<unsigned char>(file_name[i]))) return false;
  return true;
}

}  // namespace spmmc
