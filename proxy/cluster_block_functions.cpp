#include "proxy/cluster_block_functions.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <utility>

#include "compiler/common/diagnostics.h"

namespace spmmc {
namespace {

struct Node {
  double x = 0.0, y = 0.0;  // centroid
  double weight = 0.0;      // block functions in it
};

// Ward's merge cost of two clusters: the increase of the within-cluster sum of squares.
double ward(const Node& a, const Node& b) {
  const double dx = a.x - b.x, dy = a.y - b.y;
  return a.weight * b.weight / (a.weight + b.weight) * (dx * dx + dy * dy);
}

struct Merge {
  double cost;
  int32_t a, b, into;  // node ids; `into` is the new node
};

// The full Ward dendrogram of the weighted points by the nearest-neighbour chain algorithm
// (O(n^2) time, O(n) memory; exact for Ward's linkage, which is reducible). Merges are
// returned in the order made, which for Ward is not sorted by cost.
std::vector<Merge> ward_dendrogram(std::vector<Node> nodes) {
  const int32_t points = static_cast<int32_t>(nodes.size());
  std::vector<char> active(nodes.size(), 1);
  std::vector<int32_t> chain;
  std::vector<Merge> merges;
  int32_t alive = points;
  while (alive > 1) {
    if (chain.empty()) {
      for (int32_t i = 0; i < static_cast<int32_t>(nodes.size()); ++i)
        if (active[i]) {
          chain.push_back(i);
          break;
        }
    }
    const int32_t top = chain.back();
    const int32_t previous = chain.size() > 1 ? chain[chain.size() - 2] : -1;
    // Nearest active neighbour of `top`; the previous chain element wins ties, which makes
    // the chain end at a reciprocal pair.
    int32_t best = previous;
    double best_cost = previous >= 0 ? ward(nodes[top], nodes[previous]) : std::numeric_limits<double>::infinity();
    for (int32_t i = 0; i < static_cast<int32_t>(nodes.size()); ++i) {
      if (!active[i] || i == top || i == previous) continue;
      const double c = ward(nodes[top], nodes[i]);
      if (c < best_cost) {
        best_cost = c;
        best = i;
      }
    }
    if (best != previous) {
      chain.push_back(best);
      continue;
    }
    chain.pop_back();
    chain.pop_back();
    Node merged;
    merged.weight = nodes[top].weight + nodes[best].weight;
    merged.x = (nodes[top].x * nodes[top].weight + nodes[best].x * nodes[best].weight) / merged.weight;
    merged.y = (nodes[top].y * nodes[top].weight + nodes[best].y * nodes[best].weight) / merged.weight;
    active[top] = active[best] = 0;
    nodes.push_back(merged);
    active.push_back(1);
    merges.push_back({best_cost, std::min(top, best), std::max(top, best), static_cast<int32_t>(nodes.size()) - 1});
    --alive;
  }
  return merges;
}

int32_t find(std::vector<int32_t>& parent, int32_t i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

}  // namespace

BlockClustering cluster_block_functions(const std::vector<BlockFunction>& functions, int32_t max_clusters) {
  SPMMC_CHECK(max_clusters >= 1, "at least one cluster");
  BlockClustering out;
  out.cluster_of.assign(functions.size(), -1);
  if (functions.empty()) return out;

  // Distinct feature points, weighted by how many functions share them.
  std::map<std::pair<int64_t, int64_t>, int32_t> point_of;
  std::vector<Node> points;
  std::vector<int32_t> point_of_function(functions.size());
  for (size_t f = 0; f < functions.size(); ++f) {
    const auto key = std::make_pair(functions[f].loads, functions[f].fmas);
    auto [it, added] = point_of.emplace(key, static_cast<int32_t>(points.size()));
    if (added) points.push_back({static_cast<double>(key.first), static_cast<double>(key.second), 0.0});
    points[it->second].weight += 1.0;
    point_of_function[f] = it->second;
  }
  const int32_t n = static_cast<int32_t>(points.size());
  const int32_t k = std::min(max_clusters, n);

  // Cut the dendrogram at k clusters: apply its n - k cheapest merges (Ward's costs are
  // monotone along the tree, so these are exactly the first n - k merges of the greedy
  // agglomeration; ties keep the order made).
  std::vector<Merge> merges = ward_dendrogram(points);
  std::stable_sort(merges.begin(), merges.end(), [](const Merge& a, const Merge& b) { return a.cost < b.cost; });
  std::vector<int32_t> parent(static_cast<size_t>(2 * n), 0);
  std::iota(parent.begin(), parent.end(), 0);
  for (int32_t m = 0; m < n - k; ++m) {
    parent[find(parent, merges[m].a)] = merges[m].into;
    parent[find(parent, merges[m].b)] = merges[m].into;
  }

  // Number clusters by their first member; centroids and medoids over the functions.
  std::map<int32_t, int32_t> cluster_of_root;
  for (size_t f = 0; f < functions.size(); ++f) {
    const int32_t root = find(parent, point_of_function[f]);
    auto [it, added] = cluster_of_root.emplace(root, static_cast<int32_t>(out.clusters.size()));
    if (added) out.clusters.push_back({});
    BlockCluster& c = out.clusters[it->second];
    c.loads += static_cast<double>(functions[f].loads);
    c.fmas += static_cast<double>(functions[f].fmas);
    ++c.members;
    out.cluster_of[f] = it->second;
  }
  for (auto& c : out.clusters) {
    c.loads /= c.members;
    c.fmas /= c.members;
  }
  std::vector<double> best(out.clusters.size(), std::numeric_limits<double>::infinity());
  for (size_t f = 0; f < functions.size(); ++f) {
    BlockCluster& c = out.clusters[out.cluster_of[f]];
    const double dx = static_cast<double>(functions[f].loads) - c.loads, dy = static_cast<double>(functions[f].fmas) - c.fmas;
    const double d = dx * dx + dy * dy;
    if (d < best[out.cluster_of[f]]) {
      best[out.cluster_of[f]] = d;
      c.medoid = static_cast<int32_t>(f);
    }
  }
  return out;
}

}  // namespace spmmc
