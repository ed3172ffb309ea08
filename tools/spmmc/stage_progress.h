// Progress through the stages of a long command on a terminal: "spmmc compile: emitting CUDA, 12 s"
// on stderr's last line, rewritten at each stage and cleared when the command ends, so that a compile
// of a large A (tens of seconds to read, plan and print) is not silent. Nothing where stderr is not a
// terminal, TERM is dumb, or the command was asked to be quiet.
#pragma once

#include <chrono>
#include <string>

namespace spmmc {

class StageProgress {
 public:
  // `command`: the line's prefix ("spmmc compile"); `enabled`: false for --quiet.
  StageProgress(std::string command, bool enabled);
  ~StageProgress();
  StageProgress(const StageProgress&) = delete;
  StageProgress& operator=(const StageProgress&) = delete;

  // Shows `what` (e.g. "planning the tile space") with the seconds since the command began, then `after`.
  void stage(const std::string& what, const std::string& after = "");
  // Seconds since the command began.
  double seconds() const;
  // Clears the line (before the command's own output; the destructor does it too).
  void clear();

 private:
  std::string command_;
  bool enabled_ = false;
  bool printed_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace spmmc
