/*@HEADER_COMMENT*/// Template of one kernel of an spmmc-emitted file (codegen/templates/kernel_group.cuh): the
// emitter fills it once per group of consecutive tiles and pastes the kernels into
// kernel_device.cuh. Needs the tile functions and constants of kernel_device.cuh before it.
/*@*/
// Requires n % spmmc_v == 0, n <= spmmc_max_n and B, C aligned to spmmc_v elements: the entry
// point checks and takes the generic path otherwise.
__global__ void __launch_bounds__(spmmc_threads, spmmc_min_blocks)
    /*@KERNEL*/spmmc_template_kernel_0/*@*/(const spmmc_elem* __restrict__ B, spmmc_elem* __restrict__ C, int64_t n) {
  SPMMC_LAUNCH_DEPENDENTS();
  const int64_t b_tiles = (n + spmmc_n1 - 1) / spmmc_n1;
  const unsigned ld = static_cast<unsigned>(n) * static_cast<unsigned>(sizeof(spmmc_elem));
  for (int64_t bt = blockIdx.y; bt < b_tiles; bt += gridDim.y) {
    const int64_t col = bt * spmmc_n1 + static_cast<int64_t>(threadIdx.x) * spmmc_v;
    if (col >= n) continue;  // n % spmmc_v == 0: a thread has all of its V columns or none
    const spmmc_elem* const b = B + col;
    spmmc_elem* const c = C + col;
    switch (blockIdx.x) {
/*@DISPATCH*/      case 0: spmmc_tile_0(b, c, ld); break;
/*@*/      default: break;
    }
  }
  SPMMC_WAIT_FOR_PREVIOUS_KERNEL();
}
