/*@HEADER_COMMENT*/// Template of A's CSR arrays for the balanced family's file (codegen/families/balanced/balanced_csr.cuh):
// kernel_balanced.cuh takes them from here in the family's own file; where the balanced kernel is the
// small-n path of another family's file, the generic path's identical arrays (kernel_generic.cuh) serve
// it instead and this template is not printed.
/*@*/
constexpr int spmmc_rows = /*@M*/1/*@*/;
// A as CSR: spmmc_row_ptr is what spmmc verify checks the rows against; the kernel reads the products
// of its piece from spmmc_piece, their columns and weights from spmmc_col_idx and spmmc_weight_bits.
[[maybe_unused]] __device__ const int spmmc_row_ptr[] = {/*@ROW_PTR*/0, 0/*@*/};
__device__ const int spmmc_col_idx[] = {/*@COL_IDX*/0/*@*/};
__device__ const unsigned spmmc_weight_bits[] = {/*@WEIGHT_BITS*/0u/*@*/};
