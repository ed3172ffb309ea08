// Runs the fuzz target (LLVMFuzzerTestOneInput of fuzz_reader.cpp) over every file of the
// folders (or files) named on the command line, without libFuzzer: the corpus as a regression
// test in the normal suite. The target aborts on a finding, so does this program; a sanitizer
// report ends it too. Either way the input being replayed is named on stderr. Exits 0 after
// printing a one-line summary when every input was replayed, 1 on a usage problem (a missing or
// empty folder: an empty corpus would make the test pass without testing anything).
#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SPMMC_REPLAY_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SPMMC_REPLAY_ASAN 1
#endif
#ifdef SPMMC_REPLAY_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

// The input being replayed, for the crash handlers (async-signal-safe: a fixed buffer).
char g_current[4096] = "";

void name_current_input() {
  const char prefix[] = "\nfuzz replay: failed on input ";
  ssize_t ignored = write(STDERR_FILENO, prefix, sizeof prefix - 1);
  ignored = write(STDERR_FILENO, g_current, std::strlen(g_current));
  ignored = write(STDERR_FILENO, "\n", 1);
  (void)ignored;
}

extern "C" void on_fatal_signal(int sig) {
  name_current_input();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

bool collect(const fs::path& arg, std::vector<fs::path>& files) {
  std::error_code ec;
  if (fs::is_regular_file(arg, ec)) {
    files.push_back(arg);
    return true;
  }
  if (!fs::is_directory(arg, ec)) {
    std::fprintf(stderr, "fuzz replay: '%s' is neither a file nor a folder\n", arg.c_str());
    return false;
  }
  std::vector<fs::path> found;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(arg, ec))
    if (entry.is_regular_file()) found.push_back(entry.path());
  if (ec) {
    std::fprintf(stderr, "fuzz replay: cannot list '%s': %s\n", arg.c_str(), ec.message().c_str());
    return false;
  }
  if (found.empty()) {
    std::fprintf(stderr, "fuzz replay: folder '%s' holds no inputs\n", arg.c_str());
    return false;
  }
  std::sort(found.begin(), found.end());
  files.insert(files.end(), found.begin(), found.end());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_FOLDER_OR_FILE...\n", argv[0]);
    return 1;
  }
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i)
    if (!collect(argv[i], files)) return 1;

  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, on_fatal_signal);
#ifdef SPMMC_REPLAY_ASAN
  __sanitizer_set_death_callback(name_current_input);
#endif

  size_t bytes = 0, largest = 0;
  for (const fs::path& file : files) {
    std::snprintf(g_current, sizeof g_current, "%s", file.c_str());
    std::ifstream in(file, std::ios::binary);
    const std::vector<char> content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) {
      std::fprintf(stderr, "fuzz replay: cannot read '%s'\n", file.c_str());
      return 1;
    }
    // Copied into an exactly sized heap block: ASan then sees any read past the input's end.
    std::vector<uint8_t> data(content.begin(), content.end());
    LLVMFuzzerTestOneInput(data.data(), data.size());
    bytes += data.size();
    largest = std::max(largest, data.size());
  }
  std::printf("fuzz replay: %zu inputs (%zu bytes, largest %zu) replayed without a finding\n", files.size(), bytes,
              largest);
  return 0;
}
