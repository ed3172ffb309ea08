// Dependency files for build systems: `spmmc compile --depfile FILE` lists the files the emitted
// kernel was made from, so that CMake (add_custom_command's DEPFILE), Ninja or Make re-run spmmc
// when one of them changes. spmmc_add_spmm() (cmake/spmmc_add_spmm.cmake) uses it.
#pragma once

#include <string>
#include <vector>

#include "compiler/planning/target.h"
#include "tools/spmmc/cli.h"

namespace spmmc::cli {

// Writes the Makefile-style rule "TARGET: PREREQUISITE ...\n" to `depfile`, atomically
// (compiler/common/write_file_atomically.h). Every path is made absolute and escaped the way Make, Ninja
// and CMake read depfiles: a space as "\ ", '#' as "\#", '$' as "$$". A path with a newline cannot
// be written in a depfile: a usage error naming the path.
void write_depfile(const std::string& depfile, const std::string& target, const std::vector<std::string>& prerequisites);

// The files `spmmc compile` reads to make its outputs, besides its own binary: the weights and
// the target description. With --arch every description in the targets folder is listed, since
// spmmc reads them in turn to find the first with that architecture.
std::vector<std::string> compile_inputs(const std::string& weights, const Args& args, const Target& target);

}  // namespace spmmc::cli
