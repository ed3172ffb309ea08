// Thread-block function reduction (LO-SpMM §5.1.2): the block functions of a kernel are
// clustered on (global loads, FMAs) by agglomerative clustering with Ward's linkage on the
// Euclidean distance, into at most `max_clusters` clusters; each cluster becomes one proxy
// block function built from its centroid.
#pragma once

#include <cstdint>
#include <vector>

#include "proxy/block_features.h"

namespace spmmc {

struct BlockCluster {
  double loads = 0.0;     // centroid: mean loads of the members
  double fmas = 0.0;      // centroid: mean FMAs of the members
  int32_t members = 0;
  int32_t medoid = 0;     // the member nearest the centroid (lowest index on ties)
};

struct BlockClustering {
  std::vector<BlockCluster> clusters;    // ordered by their first member
  std::vector<int32_t> cluster_of;       // per block function (blockIdx.x)
};

// Clusters `functions` into min(max_clusters, distinct feature points) clusters (max_clusters
// >= 1, checked). Functions with equal features always share a cluster. Deterministic.
// Distances use the raw counts (both are instruction counts of one thread).
BlockClustering cluster_block_functions(const std::vector<BlockFunction>& functions, int32_t max_clusters);

}  // namespace spmmc
