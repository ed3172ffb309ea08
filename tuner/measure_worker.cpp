#include "tuner/measure_worker.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/common/remove_on_signal.h"

extern char** environ;

namespace spmmc {
namespace {

using Json = nlohmann::json;

// ---- files shared with the worker -----------------------------------------------------------

// A private temporary folder, removed with its contents on destruction.
class TempFolder {
 public:
  TempFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "spmmc-measure-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error(fmt::format("cannot create a temporary folder {}: {}", pattern, std::strerror(errno)));
    path_ = pattern;
  }
  ~TempFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  std::filesystem::path file(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

void write_bytes(const std::filesystem::path& path, const void* data, size_t bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  out.close();
  if (!out) throw std::runtime_error(fmt::format("{}: cannot write the measuring process's input", path.string()));
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) throw std::runtime_error(fmt::format("{}: cannot read", path));
  return bytes;
}

template <typename T>
std::vector<T> read_array(const std::string& path, size_t count) {
  const std::string bytes = read_bytes(path);
  if (bytes.size() != count * sizeof(T))
    throw std::runtime_error(fmt::format("{}: {} bytes, expected {}", path, bytes.size(), count * sizeof(T)));
  std::vector<T> out(count);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

// ---- the child process ----------------------------------------------------------------------

// How a child ended, for a LaunchFailed detail: "exit status 3", "signal 11 (Segmentation fault)".
std::string describe_end(int status) {
  if (WIFEXITED(status)) return fmt::format("exit status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return "an unknown end";
}

// A worker process with pipes to its stdin and from its stdout (stderr is inherited).
class Worker {
 public:
  explicit Worker(const std::vector<std::string>& argv) {
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0) throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
    if (pipe2(from_child, O_CLOEXEC) != 0) {
      close(to_child[0]), close(to_child[1]);
      throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int rc = posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(to_child[0]);
    close(from_child[1]);
    if (rc != 0) {
      close(to_child[1]), close(from_child[0]);
      throw std::runtime_error(fmt::format("cannot start the measuring process {}: {}", argv[0], std::strerror(rc)));
    }
    to_ = fdopen(to_child[1], "w");
    from_ = fdopen(from_child[0], "r");
  }
  ~Worker() { finish(); }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Sends `request` (one line) and reads one line of reply. False when the worker ended instead;
  // `ended` then says how.
  bool ask(const std::string& request, std::string& reply, std::string& ended) {
    if (std::fputs(request.c_str(), to_) < 0 || std::fputc('\n', to_) == EOF || std::fflush(to_) != 0) {
      ended = "the measuring process stopped reading (" + describe_end(finish()) + ")";
      return false;
    }
    reply.clear();
    int ch;
    while ((ch = std::fgetc(from_)) != EOF && ch != '\n') reply.push_back(static_cast<char>(ch));
    if (ch == EOF) {
      ended = "the measuring process ended without an answer (" + describe_end(finish()) + ")";
      return false;
    }
    return true;
  }

  // Closes its input (it exits at the end of its input) and waits for it; its wait status.
  int finish() {
    if (to_) std::fclose(to_), to_ = nullptr;
    if (from_) std::fclose(from_), from_ = nullptr;
    int status = 0;
    if (pid_ > 0) {
      while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      pid_ = -1;
    }
    return status;
  }

 private:
  pid_t pid_ = -1;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
};

// SIGPIPE ignored while talking to workers: writing to one that died is an error, not our death.
class IgnoreSigpipe {
 public:
  IgnoreSigpipe() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &saved_);
  }
  ~IgnoreSigpipe() { sigaction(SIGPIPE, &saved_, nullptr); }

 private:
  struct sigaction saved_ {};
};

std::optional<Outcome> parse_outcome(const std::string& name) {
  for (Outcome o : {Outcome::kOk, Outcome::kInvalid, Outcome::kCompileFailed, Outcome::kLaunchFailed, Outcome::kWrongResult,
                    Outcome::kNotRun})
    if (outcome_name(o) == name) return o;
  return std::nullopt;
}

Json to_json(const Measurement& m, bool sticky) {
  return {{"outcome", std::string(outcome_name(m.outcome))},
          {"detail", m.detail},
          {"registers", m.registers_per_thread},
          {"local_bytes", m.local_bytes_per_thread},
          {"blocks_per_sm", m.blocks_per_sm},
          {"error", m.max_relative_error},
          {"median_ms", m.time.median_ms},
          {"p20_ms", m.time.p20_ms},
          {"p80_ms", m.time.p80_ms},
          {"runs", m.time.runs},
          {"sticky", sticky}};
}

// The reply's measurement; std::runtime_error when it is not one.
Measurement from_json(const std::string& line, bool& sticky) {
  const Json j = Json::parse(line);
  Measurement m;
  const auto outcome = parse_outcome(j.at("outcome").get<std::string>());
  if (!outcome) throw std::runtime_error("unknown outcome " + j.at("outcome").dump());
  m.outcome = *outcome;
  m.detail = j.at("detail").get<std::string>();
  m.registers_per_thread = j.at("registers").get<int>();
  m.local_bytes_per_thread = j.at("local_bytes").get<int>();
  m.blocks_per_sm = j.at("blocks_per_sm").get<int64_t>();
  m.max_relative_error = j.at("error").get<double>();
  m.time.median_ms = j.at("median_ms").get<double>();
  m.time.p20_ms = j.at("p20_ms").get<double>();
  m.time.p80_ms = j.at("p80_ms").get<double>();
  m.time.runs = j.at("runs").get<int>();
  sticky = j.value("sticky", false);
  return m;
}

// ---- requests --------------------------------------------------------------------------------
// One JSON object: the files of B, the product and the cubin, n, the tile, the candidate's kernels
// in launch order ("kernels": [{"symbol": S, "a_tiles": T}, ...]), a launch of its own where it
// has one ("shape": [grid x, grid y, block x, block y]: the generic family's kernel), the device
// arrays to fill where it has them ("arrays": [{"name": S, "file": F, "bytes": B}, ...]:
// RealKernel::arrays, each written to a file of its own) and the timing options.

Json request_json(const RealKernel& k, const std::string& cubin_path, const std::vector<std::string>& array_paths,
                  const std::string& b_path, size_t b_floats, const std::string& want_path, size_t want_doubles,
                  const TuningOptions& options) {
  Json kernels = Json::array();
  for (const RealKernel::Launch& l : k.launches) kernels.push_back({{"symbol", l.symbol}, {"a_tiles", l.a_tiles}});
  Json request = {{"b", b_path},
          {"b_floats", b_floats},
          {"want", want_path},
          {"want_doubles", want_doubles},
          {"n", options.n},
          {"cubin", cubin_path},
          {"kernels", kernels},
          {"m1", k.tile.m1},
          {"n1", k.tile.n1},
          {"v", k.tile.cols_per_thread},
          {"min_blocks", k.tile.min_blocks_per_sm},
          {"warmup", options.timing.warmup},
          {"runs", options.timing.runs},
          {"flush_l2", options.timing.flush_l2}};
  if (k.shape) request["shape"] = {k.shape->grid_x, k.shape->grid_y, k.shape->block_x, k.shape->block_y};
  if (k.arrays) {
    Json arrays = Json::array();
    for (size_t j = 0; j < k.arrays->size(); ++j)
      arrays.push_back({{"name", (*k.arrays)[j].name}, {"file", array_paths.at(j)}, {"bytes", (*k.arrays)[j].bytes.size()}});
    request["arrays"] = arrays;
  }
  return request;
}

struct Request {
  std::string b, want, cubin;
  size_t b_floats = 0, want_doubles = 0;
  int64_t n = 0;
  RealKernel kernel;  // without its cubin
  TimingOptions timing;
};

// The request on one line; std::exception (nlohmann's or std::runtime_error) when it is none.
Request parse_request(const std::string& line) {
  const Json r = Json::parse(line);
  Request q;
  q.b = r.at("b").get<std::string>();
  q.b_floats = r.at("b_floats").get<size_t>();
  q.want = r.at("want").get<std::string>();
  q.want_doubles = r.at("want_doubles").get<size_t>();
  q.n = r.at("n").get<int64_t>();
  q.cubin = r.at("cubin").get<std::string>();
  q.kernel.tile.m1 = r.at("m1").get<int32_t>();
  q.kernel.tile.n1 = r.at("n1").get<int32_t>();
  q.kernel.tile.cols_per_thread = r.at("v").get<int32_t>();
  q.kernel.tile.min_blocks_per_sm = r.at("min_blocks").get<int32_t>();
  const Json& kernels = r.at("kernels");
  if (!kernels.is_array() || kernels.empty()) throw std::runtime_error("bad request: \"kernels\" must be a non-empty array");
  if (const auto shape = r.find("shape"); shape != r.end()) {
    const auto v = shape->get<std::vector<unsigned>>();
    if (v.size() != 4 || kernels.size() != 1 || std::find(v.begin(), v.end(), 0u) != v.end() || v[2] * v[3] > 1024)
      throw std::runtime_error("bad request: \"shape\" must be [grid x, grid y, block x, block y] of one kernel");
    LaunchShape launch;
    launch.grid_x = v[0], launch.grid_y = v[1], launch.block_x = v[2], launch.block_y = v[3];
    q.kernel.shape = launch;
  }
  for (const Json& kernel : kernels) {
    RealKernel::Launch l{kernel.at("symbol").get<std::string>(), kernel.at("a_tiles").get<int64_t>()};
    if (l.symbol.empty() || (!q.kernel.shape && (l.a_tiles < 1 || l.a_tiles > INT32_MAX)))
      throw std::runtime_error(fmt::format("bad request: kernel '{}' with {} A-tiles", l.symbol, l.a_tiles));
    q.kernel.launches.push_back(std::move(l));
  }
  if (const auto arrays = r.find("arrays"); arrays != r.end()) {
    if (!arrays->is_array()) throw std::runtime_error("bad request: \"arrays\" must be an array");
    auto values = std::make_shared<std::vector<ArrayValues>>();
    for (const Json& array : *arrays) {
      ArrayValues v{array.at("name").get<std::string>(), {}};
      if (v.name.empty()) throw std::runtime_error("bad request: an array without a name");
      v.bytes = read_array<unsigned char>(array.at("file").get<std::string>(), array.at("bytes").get<size_t>());
      values->push_back(std::move(v));
    }
    q.kernel.arrays = std::move(values);
  }
  q.timing = {r.at("warmup").get<int>(), r.at("runs").get<int>(), r.at("flush_l2").get<bool>()};
  return q;
}

}  // namespace

std::vector<Measurement> check_and_time_in_worker(const std::vector<float>& b_host, const std::vector<double>& want,
                                                  const std::vector<RealKernel>& kernels, const TuningOptions& options) {
  std::vector<Measurement> out(kernels.size());
  const TempFolder folder;
  const std::string b_path = folder.file("b.f32").string(), want_path = folder.file("want.f64").string();
  // B and the product can be hundreds of MB: an interrupted spmmc removes them (the empty folder
  // stays; the handlers only unlink).
  const RemovedOnSignal b_guard(b_path), want_guard(want_path);
  write_bytes(b_path, b_host.data(), b_host.size() * sizeof(float));
  write_bytes(want_path, want.data(), want.size() * sizeof(double));
  const IgnoreSigpipe ignore_sigpipe;
  std::unique_ptr<Worker> worker;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const RealKernel& k = kernels[i];
    Measurement& m = out[i];
    if (options.progress) options.progress({"timing kernels", i, kernels.size()});
    const std::string cubin_path = folder.file(fmt::format("k{}.cubin", i)).string();
    const RemovedOnSignal cubin_guard(cubin_path);
    write_bytes(cubin_path, k.cubin->image.data(), k.cubin->image.size());
    // The candidate's device arrays, a file each (removed with the cubin; an interrupted spmmc removes them).
    std::vector<std::string> array_paths;
    std::vector<std::unique_ptr<RemovedOnSignal>> array_guards;
    for (size_t j = 0; k.arrays && j < k.arrays->size(); ++j) {
      array_paths.push_back(folder.file(fmt::format("k{}.array{}", i, j)).string());
      array_guards.push_back(std::make_unique<RemovedOnSignal>(array_paths.back()));
      write_bytes(array_paths.back(), (*k.arrays)[j].bytes.data(), (*k.arrays)[j].bytes.size());
    }
    const Json request = request_json(k, cubin_path, array_paths, b_path, b_host.size(), want_path, want.size(), options);
    std::string reply, ended;
    try {
      if (!worker) worker = std::make_unique<Worker>(options.worker);
    } catch (const std::exception& e) {
      for (size_t j = i; j < kernels.size(); ++j) {
        out[j].outcome = Outcome::kLaunchFailed;
        out[j].detail = e.what();
        note_candidate(out[j], kernels[j]);
      }
      break;
    }
    bool sticky = false;
    if (!worker->ask(request.dump(), reply, ended)) {
      m.outcome = Outcome::kLaunchFailed;
      m.detail = ended;
      worker.reset();
    } else {
      try {
        m = from_json(reply, sticky);
      } catch (const std::exception& e) {
        m = Measurement{};
        m.outcome = Outcome::kLaunchFailed;
        m.detail = fmt::format("the measuring process answered '{}' ({})", reply.substr(0, 200), e.what());
        sticky = true;  // it cannot be trusted with the next one
      }
      if (sticky) worker.reset();
    }
    note_candidate(m, k);
    std::error_code ec;
    std::filesystem::remove(cubin_path, ec);
    for (const std::string& path : array_paths) std::filesystem::remove(path, ec);
  }
  return out;
}

int run_measure_worker(std::istream& in, std::ostream& out) {
  std::unique_ptr<GpuContext> gpu;
  std::string no_gpu;
  try {
    gpu = GpuContext::open();
  } catch (const std::exception& e) {
    no_gpu = e.what();
  }
  std::unique_ptr<KernelCheckInputs> inputs;
  std::string inputs_key;
  std::string line;
  while (std::getline(in, line)) {
    Json reply;
    bool sticky = false;
    try {
      Request q = parse_request(line);
      if (!gpu) throw std::runtime_error("no GPU in the measuring process: " + no_gpu);
      const std::string key = fmt::format("{}|{}|{}", q.b, q.want, q.n);
      if (key != inputs_key) {
        inputs.reset();
        inputs = std::make_unique<KernelCheckInputs>(*gpu, read_array<float>(q.b, q.b_floats),
                                                     read_array<double>(q.want, q.want_doubles), q.n);
        inputs_key = key;
      }
      Cubin cubin;
      cubin.image = read_bytes(q.cubin);
      q.kernel.cubin = &cubin;
      reply = to_json(check_and_time_real_kernel(q.kernel, *gpu, *inputs, q.timing), false);
    } catch (const DriverError& e) {
      sticky = is_sticky_error(e.code());
      Measurement m;
      m.outcome = Outcome::kLaunchFailed;
      m.detail = e.what();
      reply = to_json(m, sticky);
    } catch (const std::exception& e) {
      Measurement m;
      m.outcome = Outcome::kLaunchFailed;
      m.detail = fmt::format("in the measuring process: {}", e.what());
      reply = to_json(m, false);
    }
    out << reply.dump() << '\n' << std::flush;
    if (sticky) return 0;  // this process cannot use the GPU any more: the parent starts another
  }
  return gpu ? 0 : 69;
}

}  // namespace spmmc
