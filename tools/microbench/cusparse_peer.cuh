// Shared by the CSR studies that time cuSPARSE beside their kernels (graph_spmm.cu, slice_spmm.cu; link
// -lcusparse): A's CSR arrays and row-major B and C as cuSPARSE descriptors, and a launch per SpMM
// algorithm that takes them, each preprocessed once here (untimed); and the rows of the study's table with
// the fastest algorithm. Every cuSPARSE call is checked (exit 70 on failure, as a CUDA call's).
#pragma once

#include <cusparse.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "common.cuh"
#include "smtx.cuh"

#define CUSPARSE_CHECK(call)                                                                               \
  do {                                                                                                     \
    const cusparseStatus_t s_ = (call);                                                                    \
    if (s_ != CUSPARSE_STATUS_SUCCESS) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cusparseGetErrorString(s_)); \
      std::exit(mb::kExitCuda);                                                                            \
    }                                                                                                      \
  } while (0)

namespace mb {

// C = A B (m x k A with nnz products in device CSR arrays; B k x n and C m x n row-major, device memory).
// algorithms(): the name ("cuSPARSE CSR_ALG3", ...) and launch of each algorithm whose buffer size and
// preprocessing succeeded, in the order DEFAULT, ALG1, ALG2, ALG3.
class CusparsePeer {
 public:
  struct Algorithm {
    std::string name;
    std::function<void()> launch;
  };

  CusparsePeer(int m, int k, int nnz, int* row_ptr, int* col, float* w, float* b, float* c, int64_t n) {
    CUSPARSE_CHECK(cusparseCreate(&handle_));
    CUSPARSE_CHECK(cusparseCreateCsr(&a_, m, k, nnz, row_ptr, col, w, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    CUSPARSE_CHECK(cusparseCreateDnMat(&b_, k, n, n, b, CUDA_R_32F, CUSPARSE_ORDER_ROW));
    CUSPARSE_CHECK(cusparseCreateDnMat(&c_, m, n, n, c, CUDA_R_32F, CUSPARSE_ORDER_ROW));
    const std::pair<cusparseSpMMAlg_t, const char*> algs[] = {{CUSPARSE_SPMM_ALG_DEFAULT, "cuSPARSE default"},
                                                             {CUSPARSE_SPMM_CSR_ALG1, "cuSPARSE CSR_ALG1"},
                                                             {CUSPARSE_SPMM_CSR_ALG2, "cuSPARSE CSR_ALG2"},
                                                             {CUSPARSE_SPMM_CSR_ALG3, "cuSPARSE CSR_ALG3"}};
    for (const auto& [alg, name] : algs) {
      size_t bytes = 0;
      if (cusparseSpMM_bufferSize(handle_, kOp, kOp, &one_, a_, b_, &zero_, c_, CUDA_R_32F, alg, &bytes) != CUSPARSE_STATUS_SUCCESS)
        continue;
      void* buffer = nullptr;
      MB_CHECK(cudaMalloc(&buffer, std::max<size_t>(bytes, 16)));
      buffers_.push_back(buffer);
      if (cusparseSpMM_preprocess(handle_, kOp, kOp, &one_, a_, b_, &zero_, c_, CUDA_R_32F, alg, buffer) != CUSPARSE_STATUS_SUCCESS)
        continue;
      algorithms_.push_back({name, [this, alg = alg, buffer] {
                               CUSPARSE_CHECK(cusparseSpMM(handle_, kOp, kOp, &one_, a_, b_, &zero_, c_, CUDA_R_32F, alg, buffer));
                             }});
    }
  }
  ~CusparsePeer() {
    for (void* buffer : buffers_) cudaFree(buffer);
    cusparseDestroyDnMat(b_);
    cusparseDestroyDnMat(c_);
    cusparseDestroySpMat(a_);
    cusparseDestroy(handle_);
  }
  CusparsePeer(const CusparsePeer&) = delete;
  CusparsePeer& operator=(const CusparsePeer&) = delete;

  const std::vector<Algorithm>& algorithms() const { return algorithms_; }

 private:
  static constexpr cusparseOperation_t kOp = CUSPARSE_OPERATION_NON_TRANSPOSE;
  const float one_ = 1.0f, zero_ = 0.0f;
  cusparseHandle_t handle_ = nullptr;
  cusparseSpMatDescr_t a_ = nullptr;
  cusparseDnMatDescr_t b_ = nullptr, c_ = nullptr;
  std::vector<void*> buffers_;
  std::vector<Algorithm> algorithms_;
};

// A study's table: each variant's result as CsrStudy measured it (in order), and the fastest cuSPARSE
// algorithm's time and name (0 and "" before measure_peer).
class StudyTable {
 public:
  struct Row {
    std::string name;
    CsrStudy::Result r;
    bool ordered;  // summed in the first variant's order (so compared with it bit for bit)
  };

  explicit StudyTable(CsrStudy& study) : study_(study) {}
  void measure(const std::string& name, bool ordered, const std::function<void()>& launch) {
    rows_.push_back({name, study_.measure(launch, ordered), ordered});
    std::fflush(stdout);
  }
  // Every algorithm of the peer, unordered.
  void measure_peer(const CusparsePeer& peer) {
    for (const CusparsePeer::Algorithm& alg : peer.algorithms()) {
      measure(alg.name, false, alg.launch);
      if (best_us_ == 0 || rows_.back().r.us < best_us_) best_us_ = rows_.back().r.us, best_name_ = alg.name;
    }
  }
  const std::vector<Row>& rows() const { return rows_; }
  double best_peer_us() const { return best_us_; }
  const std::string& best_peer_name() const { return best_name_; }

 private:
  CsrStudy& study_;
  std::vector<Row> rows_;
  double best_us_ = 0;
  std::string best_name_;
};

}  // namespace mb
