// A's arrays on the host (spmmc compile --arrays host; docs/emitted-code.md, *A's arrays on the
// host*): the emitted code's device arrays lose their initialisers, which become host bytes that
// the entry point copies to each device at its first call there (templates/host_arrays.cuh). nvcc
// builds such a file several times faster and in a fraction of the memory (docs/benchmarks.md, *How
// A's arrays travel*).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace spmmc {

// One device array's values, for a loader that copies them into the compiled module (the tuner's
// NVRTC forms: Module::set_global).
struct ArrayValues {
  std::string name;                  // the array's name in the code (global namespace in NVRTC forms)
  std::vector<unsigned char> bytes;  // its elements, little-endian
};

// Where move_arrays_to_host puts the arrays' bytes: as string literals after each declaration (the
// emitted file), or in HostArrays::values alone (the code then declares the arrays only).
enum class HostBytes { kLiterals, kValues };

struct HostArrays {
  std::string code;                 // the code with its arrays declared without values (and their bytes)
  std::vector<std::string> arrays;  // the device arrays moved, in the order of the code
  int64_t bytes = 0;                // their bytes in all
  std::vector<ArrayValues> values;  // HostBytes::kValues: each array's bytes, in the order of `arrays`
};

// The bytes of an array of ints or of floats' bits (little-endian), for an array a printer sets aside
// (ArraysAside) instead of printing its values: one zero element where `values` is empty (CUDA has no
// arrays of zero elements; the printers print "0" there).
std::vector<unsigned char> array_bytes(const std::vector<int32_t>& values);
std::vector<unsigned char> array_bytes(const std::vector<float>& values);

// Arrays whose values a printer did not print: each declared with the placeholder initialiser `{0}`,
// its bytes here. Printing and parsing back A's arrays took most of the NVRTC form's emission at
// millions of non-zeros (docs/benchmarks.md, *The search's CSR kernels without A's values*).
using ArraysAside = std::vector<ArrayValues>;

// An array's initialiser as a printer fills it: `print()` (the values as text) where `aside` is null;
// else the placeholder "0", the bytes of `values` appended to *aside under `name`.
template <class T, class Print>
std::string values_or_aside(ArraysAside* aside, const char* name, const std::vector<T>& values, Print print) {
  if (aside == nullptr) return print();
  aside->push_back({name, array_bytes(values)});
  return "0";
}

// Moves every array of `code` (printed by the emitter: `[[maybe_unused]]` or `alignas(N)`, then
// `__device__ const int|unsigned|int4 spmmc_NAME[] = {...};`) to the host: the declaration becomes
// `__device__ T spmmc_NAME[count];` and is followed by `spmmc_NAME_host`, its bytes (little-endian) as
// string literals of at most 32768 bytes each. Other code is kept as it is. A malformed initialiser is
// an internal error (the emitter printed it). With HostBytes::kValues the bytes go to
// HostArrays::values instead and the code has the declarations only. An array named in `aside` takes
// the bytes given there (its element count from them) and its initialiser in `code` is not read.
HostArrays move_arrays_to_host(const std::string& code, HostBytes form = HostBytes::kLiterals,
                               const ArraysAside& aside = {});

// The copy's code (templates/host_arrays.cuh) with its table of `arrays` (the names
// move_arrays_to_host moved), for the end of the emitted file's anonymous namespace (the file
// defines SPMMC_HOST_ARRAYS at its top for the includes it needs and the entry point's call).
std::string print_host_array_upload(const std::vector<std::string>& arrays);

// What A's arrays as constants cost nvcc, per non-zero (a balanced file of 9.9M non-zeros: 307 s and
// 8.7 GB on the 2-core development machine; docs/benchmarks.md, *How A's arrays travel*).
constexpr double kConstantArrayNvccBytesPerNonZero = 880.0;
constexpr double kConstantArrayNvccSecondsPerNonZero = 31e-6;
// --arrays auto (the default) moves A's arrays to the host where as constants they would need more
// than this much of nvcc's memory: some 4.5M non-zeros, about 2.4 minutes of nvcc there.
constexpr double kHostArraysAboveNvccBytes = 4e9;

// nvcc's memory for `nnz` non-zeros as constants, by the measured rate above.
double constant_arrays_nvcc_bytes(int64_t nnz);

// --arrays auto: true (the host) where constant_arrays_nvcc_bytes(nnz) exceeds
// kHostArraysAboveNvccBytes; `why` says which and by what figures.
bool host_arrays_by_rule(int64_t nnz, std::string& why);

}  // namespace spmmc
