/*@HEADER_COMMENT*/// Template of the copy of A's arrays to the device (codegen/templates/host_arrays.cuh), for files
// emitted with spmmc compile --arrays host: codegen/arrays_on_host.h moves every array's initialiser
// into host bytes and fills the table below; the entry point calls spmmc_upload_arrays() first.
/*@*/
// A's arrays travel in host memory (spmmc compile --arrays host; docs/emitted-code.md, *A's arrays on
// the host*): each device array above is declared without its values, and its bytes (little-endian) are
// host string literals in pieces of at most spmmc_host_piece_bytes (MSVC's limit on one literal is 64 KB).
// nvcc builds such a file several times faster, in a fraction of the memory, than one whose arrays are
// initialised device constants (the device image of those passes through cicc, ptxas and the host
// compiler as integers). The price is state: at the first call on each device the bytes are copied
// to its arrays, and again in a new context of that device (after cudaDeviceReset), which the
// context's ID (cuCtxGetId, through the runtime's driver entry points) tells apart at every call.
// Host code only: the device pass of nvcc (cicc) does not parse the bytes; spmmc verify reads them and
// the table (SPMMC_VERIFY), not the copy.
#if !defined(__CUDA_ARCH__) || defined(SPMMC_VERIFY)
constexpr size_t spmmc_host_piece_bytes = 32768;
struct spmmc_host_array {
  const void* symbol;          // the device array (its host shadow, as cudaMemcpyToSymbol takes it)
  const char* const* pieces;   // its bytes, piece after piece
  size_t bytes;                // sizeof the device array
};
/*@HOST_ARRAY_TABLE*/const spmmc_host_array spmmc_host_arrays[] = {{nullptr, nullptr, 0}};/*@*/
#endif
#ifndef __CUDA_ARCH__
static_assert(CUDART_VERSION >= 12000, "spmmc --arrays host needs the CUDA 12 runtime (cuCtxGetId)");
constexpr int spmmc_upload_devices = 64;  // devices 0..63; a call on another returns cudaErrorInvalidDevice

// The current context's ID, unique in the process (a reset device's next context has another); 0
// where there is none yet, or where the driver does not give it.
unsigned long long spmmc_context_id() {
  typedef int (*get_current_t)(void** context);
  typedef int (*get_id_t)(void* context, unsigned long long* id);
  static get_current_t get_current = nullptr;
  static get_id_t get_id = nullptr;
  static std::once_flag looked_up;
  std::call_once(looked_up, [] {
    void* current = nullptr;
    void* id = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &current, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      current = nullptr;
    if (cudaGetDriverEntryPointByVersion("cuCtxGetId", &id, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      id = nullptr;
#else
    if (cudaGetDriverEntryPoint("cuCtxGetCurrent", &current, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      current = nullptr;
    if (cudaGetDriverEntryPoint("cuCtxGetId", &id, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      id = nullptr;
#endif
    if (current != nullptr && id != nullptr) {
      get_current = reinterpret_cast<get_current_t>(current);
      get_id = reinterpret_cast<get_id_t>(id);
    }
  });
  void* context = nullptr;
  unsigned long long id = 0;
  if (get_current == nullptr || get_current(&context) != 0 || context == nullptr || get_id(context, &id) != 0) return 0;
  return id;
}

// Copies every array's bytes to the current device where this context has not had them: on a
// stream of its own, with this thread's capture mode relaxed for the copy (so that a call while
// another stream is being captured can make it; the caller's stream is not touched). Once per
// context; concurrent first calls wait for one copy.
cudaError_t spmmc_upload_arrays() {
  static std::atomic<unsigned long long> uploaded[spmmc_upload_devices];  // the context each device's copy is in
  static std::mutex copying;
  int device = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status != cudaSuccess) return status;
  if (device < 0 || device >= spmmc_upload_devices) return cudaErrorInvalidDevice;
  const unsigned long long context = spmmc_context_id();
  if (context != 0 && uploaded[device].load(std::memory_order_acquire) == context) return cudaSuccess;
  std::lock_guard<std::mutex> lock(copying);
  if (context != 0 && uploaded[device].load(std::memory_order_acquire) == context) return cudaSuccess;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  status = cudaThreadExchangeStreamCaptureMode(&mode);
  if (status != cudaSuccess) return status;
  cudaStream_t stream = nullptr;
  status = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  std::vector<char> staging;
  for (const spmmc_host_array& a : spmmc_host_arrays) {
    if (status != cudaSuccess || a.bytes == 0) continue;
    staging.resize(a.bytes);
    for (size_t at = 0, piece = 0; at < a.bytes; at += spmmc_host_piece_bytes, ++piece)
      std::memcpy(staging.data() + at, a.pieces[piece], a.bytes - at < spmmc_host_piece_bytes ? a.bytes - at : spmmc_host_piece_bytes);
    status = cudaMemcpyToSymbolAsync(a.symbol, staging.data(), a.bytes, 0, cudaMemcpyHostToDevice, stream);
    if (status == cudaSuccess) status = cudaStreamSynchronize(stream);  // before the staging buffer is reused
  }
  if (stream != nullptr) {
    const cudaError_t destroyed = cudaStreamDestroy(stream);
    if (status == cudaSuccess) status = destroyed;
  }
  const cudaError_t restored = cudaThreadExchangeStreamCaptureMode(&mode);
  if (status == cudaSuccess) status = restored;
  // The context exists now (the copy made it where it did not); 0 where the driver cannot tell,
  // and then every call copies again (correct, slow).
  if (status == cudaSuccess) uploaded[device].store(spmmc_context_id(), std::memory_order_release);
  return status;
}
#endif  // __CUDA_ARCH__
