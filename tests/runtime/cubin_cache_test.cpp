#include "runtime/cubin_cache.h"

#include <cstdlib>
#include <optional>

#include "runtime/nvrtc_compile.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

const CudaSource kKernel{"cached.cu", "extern \"C\" __global__ void spmmc_test_cached(float* y) { y[threadIdx.x] *= 2.0f; }\n"};

std::filesystem::path entry_file(const CubinCache& cache, const std::string& key) {
  return cache.dir() / key.substr(0, 2) / (key + ".cubin");
}

TEST_CASE("compile_to_cubin misses then hits the cubin cache", "[cubin_cache]") {
  test::TempDir tmp;
  const CubinCache cache(tmp.path / "cubins");
  const Cubin first = compile_to_cubin(kKernel, NvrtcOptions{}, &cache);
  CHECK_FALSE(first.from_cache);
  CHECK(std::filesystem::is_regular_file(entry_file(cache, first.key)));
  const Cubin second = compile_to_cubin(kKernel, NvrtcOptions{}, &cache);
  CHECK(second.from_cache);
  CHECK(second.key == first.key);
  CHECK(second.image == first.image);
  REQUIRE(cache.load(first.key).has_value());
  CHECK(*cache.load(first.key) == first.image);
}

TEST_CASE("a truncated or corrupted cubin cache entry is a miss", "[cubin_cache]") {
  test::TempDir tmp;
  const CubinCache cache(tmp.path);
  const Cubin fresh = compile_to_cubin(kKernel, NvrtcOptions{}, &cache);
  const std::filesystem::path file = entry_file(cache, fresh.key);
  const std::string entry = test::read_file(file);
  REQUIRE(entry.size() > fresh.image.size());

  test::write_file(file, entry.substr(0, entry.size() - 1));  // truncated by one byte
  CHECK_FALSE(cache.load(fresh.key).has_value());
  test::write_file(file, entry.substr(0, entry.size() - fresh.image.size()));  // the header only
  CHECK_FALSE(cache.load(fresh.key).has_value());
  std::string flipped = entry;
  flipped[flipped.size() - 100] = static_cast<char>(flipped[flipped.size() - 100] ^ 1);  // one bit of the image
  test::write_file(file, flipped);
  CHECK_FALSE(cache.load(fresh.key).has_value());
  test::write_file(file, fresh.image);  // a bare cubin, no header
  CHECK_FALSE(cache.load(fresh.key).has_value());
  test::write_file(file, "");
  CHECK_FALSE(cache.load(fresh.key).has_value());

  // The miss recompiles and repairs the entry.
  const Cubin again = compile_to_cubin(kKernel, NvrtcOptions{}, &cache);
  CHECK_FALSE(again.from_cache);
  CHECK(again.image == fresh.image);
  CHECK(test::read_file(file) == entry);
  CHECK(compile_to_cubin(kKernel, NvrtcOptions{}, &cache).from_cache);
}

TEST_CASE("cubin cache keys differ by source and options and NVRTC version and architecture", "[cubin_cache]") {
  const std::string base = CubinCache::key("src", "opts", "13.0", "sm_90");
  CHECK(base == CubinCache::key("src", "opts", "13.0", "sm_90"));
  CHECK(base != CubinCache::key("src2", "opts", "13.0", "sm_90"));
  CHECK(base != CubinCache::key("src", "opts2", "13.0", "sm_90"));
  CHECK(base != CubinCache::key("src", "opts", "13.1", "sm_90"));
  CHECK(base != CubinCache::key("src", "opts", "13.0", "sm_80"));
  // Length-prefixed: moving a byte from one part to the next changes the key.
  CHECK(CubinCache::key("ab", "c", "v", "a") != CubinCache::key("a", "bc", "v", "a"));

  NvrtcOptions capped;
  capped.flags = {"-maxrregcount=64"};
  NvrtcOptions sm80;
  sm80.arch = "sm_80";
  const std::string plain = compile_to_cubin(kKernel, NvrtcOptions{}).key;
  CHECK(plain != compile_to_cubin(kKernel, capped).key);
  CHECK(plain != compile_to_cubin(kKernel, sm80).key);
}

TEST_CASE("a cubin cache that cannot be written is ignored", "[cubin_cache]") {
  test::TempDir tmp;
  test::write_file(tmp.path / "a_file", "not a folder");
  const CubinCache cache(tmp.path / "a_file" / "cubins");  // its folders cannot be created
  const Cubin first = compile_to_cubin(kKernel, NvrtcOptions{}, &cache);
  CHECK_FALSE(first.from_cache);
  CHECK_NOTHROW(cache.store(first.key, first.image));
  CHECK_FALSE(cache.load(first.key).has_value());
  CHECK_FALSE(compile_to_cubin(kKernel, NvrtcOptions{}, &cache).from_cache);
}

// Sets an environment variable for the scope, restoring the old value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) setenv(name, value, 1); else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1); else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST_CASE("default_cubin_cache_dir follows SPMMC_CACHE_DIR then XDG_CACHE_HOME then HOME", "[cubin_cache]") {
  const ScopedEnv home("HOME", "/home/someone");
  {
    const ScopedEnv spmmc("SPMMC_CACHE_DIR", "/srv/spmmc-cache");
    const ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    CHECK(default_cubin_cache_dir() == "/srv/spmmc-cache");
  }
  {
    const ScopedEnv spmmc("SPMMC_CACHE_DIR", "");
    const ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    CHECK(default_cubin_cache_dir() == "/xdg/spmmc/cubins");
  }
  const ScopedEnv spmmc("SPMMC_CACHE_DIR", nullptr);
  const ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
  CHECK(default_cubin_cache_dir() == "/home/someone/.cache/spmmc/cubins");
}

}  // namespace
}  // namespace spmmc
