// Writing an output file so that readers never see a half-written one: every file spmmc
// produces (matrices, emitted kernels, reports) goes through write_file_atomically, and files
// that belong together (NAME.cu, NAME.h, NAME.json) through write_files_atomically.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace spmmc {

// Calls `write` with a buffered stream onto a new temporary file in the directory of `path`
// (named ".<name>.tmp-XXXXXX"), flushes it, fsyncs it, gives it the permissions a new file
// would get (0666 less the umask; an existing regular file keeps its mode), and renames it over
// `path`. Either `path` afterwards holds everything `write` wrote, or it is left as it was.
//
// `path` that names an existing non-regular file (a terminal, a pipe, /dev/stdout, /dev/full)
// cannot be replaced by rename and is written in place instead; a symbolic link is followed,
// and the file it points to is replaced.
//
// The temporary file is registered with RemovedOnSignal (compiler/common/remove_on_signal.h) while it
// exists, so that a process interrupted by SIGINT, SIGTERM or SIGHUP leaves none behind once
// remove_files_on_termination_signals() is installed.
//
// Errors are UserErrors naming `path`; on every failure the temporary file is removed:
//  * ExitCode::kCantCreate (73): the file cannot be created (missing directory, no permission,
//    `path` is a directory, the rename fails);
//  * ExitCode::kIoError (74): writing, flushing, fsync or close fails (disk full, file size
//    limit), or `write` leaves the stream in a failed state: "write failed: <strerror>".
// An exception thrown by `write` itself (e.g. a UserError refusing the content) is rethrown
// unchanged after the cleanup.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);

// One file of a set written by write_files_atomically.
struct FileToWrite {
  std::string path;
  std::function<void(std::ostream&)> write;
};

// write_file_atomically for a set of files that belong together (NAME.cu, NAME.h, NAME.json):
// every file is written to its temporary file first, in the order given, and only once all of
// them are complete are they renamed over their paths, in the same order. A failure while
// writing (disk full, file size limit, an exception from a `write`) removes every temporary
// file and leaves every path as it was; the same errors as write_file_atomically, naming the
// file that failed. Only a failing rename (which the checks before it make all but impossible)
// leaves the files renamed before it replaced. SIGINT, SIGTERM and SIGHUP are held back during
// the renames, so that an interrupted process leaves the old set or the new one. A special file
// of the set is written in place when its turn comes, before the renames. Concurrent writers of
// one set must take turns around the call (OutputSetLock, compiler/common/output_set_lock.h) for the
// set to come from one of them.
void write_files_atomically(const std::vector<FileToWrite>& files);

// True when `file_name` (a name without folder) is one of the temporary files that
// write_file_atomically creates for a target named `target_file_name` in the same folder:
// ".<target_file_name>.tmp-<12 lowercase hex digits>". Such a file outlives the call only when
// the process was killed (SIGKILL, a crash, power loss); whoever knows that no writer of the
// target is running (OutputSetLock) may remove it. False for targets whose name is longer than
// the 200 characters a temporary name keeps, since those names are ambiguous.
bool is_temporary_file_of(const std::string& file_name, const std::string& target_file_name);

}  // namespace spmmc
