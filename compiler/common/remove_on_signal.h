// Temporary files that an interrupted spmmc removes before it dies: write_file_atomically
// registers each temporary file for as long as it exists, and the handlers installed by
// remove_files_on_termination_signals remove what is registered when SIGINT, SIGTERM or SIGHUP
// arrives.
#pragma once

#include <string>

namespace spmmc {

// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove every file registered by a live
// RemovedOnSignal and then end the process by the same signal with its default action (a shell
// reports 130, 143 and 129), and ignores SIGXFSZ, so that writing past the file size limit
// (`ulimit -f`) fails with EFBIG, which the writers report as an I/O error (exit 74), instead of
// killing the process halfway through a file. A signal that was ignored when the process
// started (nohup, `trap '' INT`) stays ignored. Call once, from main, before any work.
void remove_files_on_termination_signals();

// While it lives, `path` is removed if one of those signals ends the process. Register a
// temporary file before creating it and unregister it (destroy this) after renaming or removing
// it. Best effort: at most 64 files at a time, each path shorter than 4096 bytes; one beyond
// that is simply not registered. Thread-safe; the handlers only unlink.
class RemovedOnSignal {
 public:
  explicit RemovedOnSignal(const std::string& path);
  ~RemovedOnSignal();
  RemovedOnSignal(const RemovedOnSignal&) = delete;
  RemovedOnSignal& operator=(const RemovedOnSignal&) = delete;

 private:
  int slot_ = -1;
};

}  // namespace spmmc
