// GPU target descriptions: the hardware limits the tile-space constraints check against.
// They live as JSON in models/targets/ (one file per GPU; see docs/design/planning.md for the
// fields) so a new GPU needs no code.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace spmmc {

struct Target {
  std::string name;         // "h100"
  std::string description;
  std::string arch;         // "sm_90"
  int64_t sm_count = 0;
  int64_t warp_size = 0;
  int64_t registers_per_sm = 0;
  int64_t max_registers_per_block = 0;
  int64_t max_registers_per_thread = 0;
  int64_t register_allocation_granularity = 1;  // registers per thread are allocated in these units
  int64_t max_threads_per_sm = 0;
  int64_t max_threads_per_block = 0;
  int64_t max_blocks_per_sm = 0;
  int64_t shared_memory_per_sm = 0;
  int64_t max_shared_memory_per_block = 0;
  int64_t reserved_shared_memory_per_block = 0;  // taken by the driver from each block
  int64_t l2_bytes = 0;
  std::string file;         // the description it was loaded from (load_target); empty when parsed from text
};

// Resolves `name_or_path` to a target: a path to a .json file, or the name of a file in the
// targets folder (models/targets/NAME.json). An unknown name is a usage error listing the
// known ones; a malformed file is a data error naming the file and the field.
Target load_target(const std::string& name_or_path);

// The number of an architecture name: 90 for "sm_90", 0 when it is not of the form sm_N.
int target_sm(const std::string& arch);

// The first target (by name) whose arch is `arch` ("sm_90"); a usage error when none is.
Target target_for_arch(const std::string& arch);

// Parses a target description; `file` names it in diagnostics.
Target parse_target(const std::string& json_text, const std::string& file);

// The folder of target descriptions, the first of: $SPMMC_MODELS_DIR/targets; the installed
// models beside the running executable (<prefix>/share/spmmc/models/targets for <prefix>/bin/spmmc,
// so an install tree works wherever it is copied); the source tree's models/targets; the
// install prefix's share/spmmc/models/targets as configured.
std::filesystem::path targets_dir();

// Names of the targets in targets_dir(), sorted.
std::vector<std::string> list_targets();

}  // namespace spmmc
