// Writing an output file so that readers never see a half-written one: every file spmmc
// produces (matrices, emitted kernels, reports) goes through write_file_atomically.
#pragma once

#include <functional>
#include <ostream>
#include <string>

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
// Errors are UserErrors naming `path`; on every failure the temporary file is removed:
//  * ExitCode::kCantCreate (73): the file cannot be created (missing directory, no permission,
//    `path` is a directory, the rename fails);
//  * ExitCode::kIoError (74): writing, flushing, fsync or close fails (disk full, file size
//    limit), or `write` leaves the stream in a failed state.
// An exception thrown by `write` itself (e.g. a UserError refusing the content) is rethrown
// unchanged after the cleanup.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);

}  // namespace spmmc
