// Measuring real kernels in a worker process. A kernel that faults (an illegal address: a sticky
// CUDA error) leaves the process that ran it unable to use the GPU until it exits; nothing in the
// driver recovers it (docs/design/proxies.md, "Faulting candidates"). So spmmc checks and times
// real kernels in a child process, one request at a time, and starts a new child after a fault:
// a fault costs only its candidate.
//
// The protocol (private to spmmc; parent and worker are the same binary): the parent writes B
// (float32) and the float64 product to files in a temporary folder, each cubin beside them (and the
// device arrays a cubin declares without values, RealKernel::arrays, a file each), and
// sends one JSON object per line on the worker's stdin, one per candidate, naming its kernels in
// launch order with the A-tiles of each ("kernels": [{"symbol": S, "a_tiles": T}, ...]); the
// worker answers one JSON line per request on stdout, and exits after a sticky error or at the
// end of its input. A request it cannot read is answered LaunchFailed, GPU or not.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "tuner/check_real_kernels.h"

namespace spmmc {

// The parent side of check_and_time_real_kernels with options.worker set: checks and times
// `kernels` against B (`b_host`, options.n columns) and `want` (the float64 product) in worker
// processes started with the command line options.worker. A worker that reports a sticky error,
// dies, or answers nonsense costs the candidate it was running (LaunchFailed, with the driver's
// message or how the process ended); the next candidate gets a new worker. Failing to start a
// worker at all is LaunchFailed for every remaining candidate, naming why.
std::vector<Measurement> check_and_time_in_worker(const std::vector<float>& b_host, const std::vector<double>& want,
                                                  const std::vector<RealKernel>& kernels, const TuningOptions& options);

// The worker side: opens the GPU, then answers requests from `in` on `out` until end of input
// or a sticky error. Returns the process's exit code (0; 69 without a GPU, after answering).
int run_measure_worker(std::istream& in, std::ostream& out);

}  // namespace spmmc
