#include "tools/spmmc/stage_progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace spmmc {

StageProgress::StageProgress(std::string command, bool enabled)
    : command_(std::move(command)), start_(std::chrono::steady_clock::now()) {
  const char* term = std::getenv("TERM");
  enabled_ = enabled && isatty(STDERR_FILENO) != 0 && !(term && std::strcmp(term, "dumb") == 0);
}

StageProgress::~StageProgress() { clear(); }

void StageProgress::clear() {
  if (!enabled_ || !printed_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  printed_ = false;
}

double StageProgress::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void StageProgress::stage(const std::string& what, const std::string& after) {
  if (!enabled_) return;
  std::fprintf(stderr, "\r\033[K%s: %s, %.0f s%s", command_.c_str(), what.c_str(), seconds(), after.c_str());
  std::fflush(stderr);
  printed_ = true;
}

}  // namespace spmmc
