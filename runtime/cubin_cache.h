// The on-disk cache of compiled cubins: one file per key (the hex SHA-256 of source, options,
// NVRTC version and architecture), written atomically so concurrent processes never see half a
// file. A cache is an optimisation only: an unreadable or corrupt entry is a miss.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace spmmc {

class CubinCache {
 public:
  // Uses (and creates on first store) `dir`.
  explicit CubinCache(std::filesystem::path dir);

  const std::filesystem::path& dir() const { return dir_; }

  // The key of a compilation: hex SHA-256 over all four parts (length-prefixed).
  static std::string key(const std::string& source, const std::string& options, const std::string& nvrtc_version,
                         const std::string& arch);

  std::optional<std::string> load(const std::string& key) const;
  // Stores atomically; a failure to write is ignored (the cache is only an optimisation).
  void store(const std::string& key, const std::string& image) const;

 private:
  std::filesystem::path dir_;
};

// $SPMMC_CACHE_DIR, else $XDG_CACHE_HOME/spmmc/cubins, else $HOME/.cache/spmmc/cubins (empty
// variables count as unset; with none of them, <temp dir>/spmmc-cubins).
std::filesystem::path default_cubin_cache_dir();

}  // namespace spmmc
