#include "tessel/expr/checks.hpp"

#include <algorithm>
#include <format>
#include <vector>

#include "tessel/core/error.hpp"

namespace tessel::detail {

Shape broadcast_shapes(char const* op, Shape const& a, Shape const& b) {
  std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 0);
  for (std::size_t i = 0; i < rank; ++i) {
    // Align from the right, as NumPy does.
    std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw Error(std::format("{}: shapes {} and {} do not broadcast: dimension {} of the result would need "
                              "sizes {} and {} to match (or one of them to be 1)",
                              op, to_string(a), to_string(b), i, da, db));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

void check_same_devices(char const* op, Mesh const* a, Mesh const* b) {
  if (a == nullptr || b == nullptr || a == b) return;
  if (!same_devices(*a, *b))
    throw Error(std::format("{}: operands live on different meshes, {} and {}; move one with device_put first", op,
                            to_string(*a), to_string(*b)));
}

}  // namespace tessel::detail

#include "tessel/expr/reduce.hpp"

namespace tessel::detail {

FixedVector<std::uint8_t, max_rank> normalize_axes(char const* op, Axes const& axes, Shape const& shape) {
  FixedVector<std::uint8_t, max_rank> out;
  int rank = shape.rank();
  if (axes.all()) {
    for (int d = 0; d < rank; ++d) out.push_back(static_cast<std::uint8_t>(d));
    return out;
  }
  for (int a : axes.list()) {
    int d = a < 0 ? a + rank : a;
    if (d < 0 || d >= rank)
      throw Error(std::format("{}: axis {} is out of range for shape {} of rank {}", op, a, to_string(shape), rank));
    if (std::find(out.begin(), out.end(), static_cast<std::uint8_t>(d)) != out.end())
      throw Error(std::format("{}: axis {} is given twice for shape {}", op, a, to_string(shape)));
    out.push_back(static_cast<std::uint8_t>(d));
  }
  std::sort(out.begin(), out.end());
  return out;
}

Shape reduced_shape(Shape const& shape, FixedVector<std::uint8_t, max_rank> const& axes, bool keepdims) {
  Shape out;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<std::uint8_t>(d)) != axes.end();
    if (!reduced) out.push_back(shape[d]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}

}  // namespace tessel::detail

#include "tessel/expr/dot.hpp"

namespace tessel::detail {

Shape dot_shape(Shape const& lhs, Shape const& rhs, DotDims const& dims) {
  auto check_dims = [&](char const* side, Shape const& shape, auto const& list, char const* what) {
    for (auto d : list)
      if (d >= shape.size())
        throw Error(std::format("dot_general: {} {} dimension {} is out of range for shape {}", side, what, d,
                                to_string(shape)));
  };
  check_dims("lhs", lhs, dims.lhs_contract, "contracting");
  check_dims("rhs", rhs, dims.rhs_contract, "contracting");
  check_dims("lhs", lhs, dims.lhs_batch, "batch");
  check_dims("rhs", rhs, dims.rhs_batch, "batch");
  if (dims.lhs_contract.size() != dims.rhs_contract.size() || dims.lhs_batch.size() != dims.rhs_batch.size())
    throw Error("dot_general: lhs and rhs must name the same number of contracting and of batch dimensions");
  for (std::size_t i = 0; i < dims.lhs_contract.size(); ++i)
    if (lhs[dims.lhs_contract[i]] != rhs[dims.rhs_contract[i]])
      throw Error(std::format("dot_general: contracting dimension {} of lhs {} has size {} but contracting dimension "
                              "{} of rhs {} has size {}",
                              dims.lhs_contract[i], to_string(lhs), lhs[dims.lhs_contract[i]], dims.rhs_contract[i],
                              to_string(rhs), rhs[dims.rhs_contract[i]]));
  for (std::size_t i = 0; i < dims.lhs_batch.size(); ++i)
    if (lhs[dims.lhs_batch[i]] != rhs[dims.rhs_batch[i]])
      throw Error(std::format("dot_general: batch dimension {} of lhs {} has size {} but batch dimension {} of rhs {} "
                              "has size {}",
                              dims.lhs_batch[i], to_string(lhs), lhs[dims.lhs_batch[i]], dims.rhs_batch[i],
                              to_string(rhs), rhs[dims.rhs_batch[i]]));
  auto in = [](auto const& list, std::size_t d) { return std::find(list.begin(), list.end(), d) != list.end(); };
  Shape out;
  for (auto d : dims.lhs_batch) out.push_back(lhs[d]);
  for (std::size_t d = 0; d < lhs.size(); ++d)
    if (!in(dims.lhs_batch, d) && !in(dims.lhs_contract, d)) out.push_back(lhs[d]);
  for (std::size_t d = 0; d < rhs.size(); ++d)
    if (!in(dims.rhs_batch, d) && !in(dims.rhs_contract, d)) out.push_back(rhs[d]);
  return out;
}

}  // namespace tessel::detail
