#pragma once
// The meshes and specs the property tests sweep: 1-D, 2-D, 3-D, square and not, and meshes over
// a subset of the devices in a scrambled order.
#include <algorithm>
#include <vector>

#include "tessel/tessel.hpp"

namespace tessel::test {

inline std::vector<Mesh> all_meshes() {
  return {
      make_mesh({8}, {"x"}),
      make_mesh({2, 4}, {"a", "b"}),
      make_mesh({4, 2}, {"a", "b"}),
      make_mesh({1, 8}, {"a", "b"}),
      make_mesh({8, 1}, {"a", "b"}),
      make_mesh({2, 2, 2}, {"a", "b", "c"}),
      make_mesh({3, 2}, {"a", "b"}, {5, 0, 3, 1, 7, 2}),  // 6 of the 8 devices, out of order
      make_mesh({1}, {"x"}, {4}),
  };
}

// Every ordered subset of the mesh's axes: the empty one, every axis alone, all pairs in both
// orders, and so on up to every permutation of all axes.
inline std::vector<std::vector<int>> ordered_axis_subsets(MeshAxes const& mesh) {
  std::vector<std::vector<int>> out;
  int rank = static_cast<int>(mesh.num_axes());
  for (int mask = 0; mask < (1 << rank); ++mask) {
    std::vector<int> axes;
    for (int a = 0; a < rank; ++a)
      if (mask & (1 << a)) axes.push_back(a);
    do out.push_back(axes);
    while (std::next_permutation(axes.begin(), axes.end()));
  }
  return out;
}

// Every spec of rank `rank` that uses each mesh axis at most once (each axis: unused, or on one
// dimension; several axes on one dimension in both orders).
inline std::vector<PartitionSpec> all_specs(MeshAxes const& mesh, int rank);

// The shardings of `mesh` by these specs that can tile `shape`: uneven splits included (their last
// devices hold short or empty blocks).
inline std::vector<NamedSharding> tilings(Mesh const& mesh, Shape const& shape, std::vector<PartitionSpec> const& specs) {
  std::vector<NamedSharding> out;
  for (auto const& spec : specs) {
    NamedSharding s(mesh, spec);
    try {
      s.check_shape(shape);
      out.push_back(s);
    } catch (Error const&) {
    }
  }
  return out;
}

// Every sharding of `mesh` (all_specs) that can tile `shape`.
inline std::vector<NamedSharding> shardings_of(Mesh const& mesh, Shape const& shape) {
  return tilings(mesh, shape, all_specs(mesh.axes(), static_cast<int>(shape.size())));
}

// f(sharding) for every spec of shape's rank on every test mesh that splits `shape` evenly.
template <class F>
void for_each_even_sharding(Shape const& shape, F&& f) {
  for (auto const& mesh : all_meshes())
    for (auto const& spec : all_specs(mesh.axes(), shape.rank())) {
      NamedSharding s(mesh, spec);
      bool even = true;
      for (std::size_t d = 0; d < shape.size(); ++d) even = even && shape[d] % s.layout().shards_along(d) == 0;
      if (even) f(s);
    }
}

inline std::vector<PartitionSpec> all_specs(MeshAxes const& mesh, int rank) {
  std::vector<PartitionSpec> specs;
  std::vector<int> order(mesh.num_axes());
  for (std::size_t a = 0; a < order.size(); ++a) order[a] = static_cast<int>(a);
  do {
    // Each axis goes to dimension 0..rank-1, or nowhere (rank): (rank+1)^axes assignments.
    int combos = 1;
    for (std::size_t a = 0; a < order.size(); ++a) combos *= rank + 1;
    for (int c = 0; c < combos; ++c) {
      FixedVector<DimSpec, max_rank> dims(static_cast<std::size_t>(rank), DimSpec{});
      std::vector<std::vector<AxisName>> per_dim(static_cast<std::size_t>(rank));
      int code = c;
      for (int axis : order) {
        int dim = code % (rank + 1);
        code /= rank + 1;
        if (dim < rank) per_dim[static_cast<std::size_t>(dim)].push_back(mesh.name(static_cast<std::size_t>(axis)));
      }
      for (int d = 0; d < rank; ++d) {
        FixedVector<AxisName, max_mesh_axes> names;
        for (auto const& n : per_dim[static_cast<std::size_t>(d)]) names.push_back(n);
        dims[static_cast<std::size_t>(d)] = DimSpec::of(names);
      }
      auto spec = PartitionSpec::from_dims(dims);
      if (std::find(specs.begin(), specs.end(), spec) == specs.end()) specs.push_back(spec);
    }
  } while (std::next_permutation(order.begin(), order.end()));
  return specs;
}

}  // namespace tessel::test
