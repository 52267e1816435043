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

#include "tessel/expr/iota.hpp"
#include "tessel/expr/scan.hpp"
#include "tessel/expr/take.hpp"
#include "tessel/expr/normalization.hpp"
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

namespace {
// `axis` (negative counts from the end) as a dimension of `shape`; fails naming it ("axis" or
// "dimension", as the op calls it) and the shape.
std::uint8_t one_axis(char const* op, char const* what, Shape const& shape, int axis) {
  int rank = shape.rank();
  int d = axis < 0 ? axis + rank : axis;
  if (d < 0 || d >= rank)
    throw Error(std::format("{}: {} {} is out of range for shape {} of rank {}", op, what, axis, to_string(shape), rank));
  return static_cast<std::uint8_t>(d);
}
}  // namespace

std::uint8_t iota_dimension(Shape const& shape, int dimension) {
  (void)shape.num_elements();  // checks the sizes
  return one_axis("iota", "dimension", shape, dimension);
}

std::uint8_t scan_axis(char const* op, Shape const& shape, int axis) { return one_axis(op, "axis", shape, axis); }

Shape take_shape(Shape const& table, Shape const& indices, int& axis) {
  axis = one_axis("take", "axis", table, axis);
  auto a = static_cast<std::size_t>(axis);
  if (table.size() - 1 + indices.size() > max_rank)
    throw Error(std::format("take: a table of shape {} and indices of shape {} give a result of rank {}, more than {}",
                            to_string(table), to_string(indices), table.size() - 1 + indices.size(), max_rank));
  Shape out;
  for (std::size_t d = 0; d < a; ++d) out.push_back(table[d]);
  for (auto n : indices) out.push_back(n);
  for (std::size_t d = a + 1; d < table.size(); ++d) out.push_back(table[d]);
  return out;
}

std::int64_t reduced_count(char const* op, Axes const& axes, Shape const& shape) {
  std::int64_t n = 1;
  for (auto d : normalize_axes(op, axes, shape)) n *= shape[d];
  return n;
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

namespace {

std::string dims_string(FixedVector<std::uint8_t, max_rank> const& dims) {
  std::string out = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) out += std::format("{}{}", i ? ", " : "", dims[i]);
  return out + (dims.size() == 1 ? ",)" : ")");
}

// One operand's side of lax.dot_general's checks, with jax's wording: every dimension in range,
// none named twice, batch and contracting dimensions disjoint.
void check_side(char const* side, Shape const& shape, FixedVector<std::uint8_t, max_rank> const& batch,
                FixedVector<std::uint8_t, max_rank> const& contract) {
  auto in_range = [&](auto const& dims, char const* what) {
    for (auto d : dims)
      if (d >= shape.size())
        throw Error(std::format("dot_general: {} {} dimension {} is out of range for shape {} (rank {})", side, what,
                                d, to_string(shape), shape.size()));
  };
  in_range(contract, "contracting");
  in_range(batch, "batch");
  auto distinct = [&](auto const& dims, char const* what) {
    for (std::size_t i = 0; i < dims.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (dims[i] == dims[j])
          throw Error(std::format("dot_general requires {} {} dimensions {} to be distinct; dimension {} appears "
                                  "twice",
                                  side, what, dims_string(dims), dims[i]));
  };
  distinct(contract, "contracting");
  distinct(batch, "batch");
  for (auto d : batch)
    for (auto c : contract)
      if (d == c)
        throw Error(std::format("dot_general requires {0} batch dimensions {1} and {0} contracting dimensions {2} to "
                                "be disjoint; dimension {3} is in both",
                                side, dims_string(batch), dims_string(contract), d));
}

}  // namespace

Shape dot_shape(Shape const& lhs, Shape const& rhs, DotDims const& dims) {
  if (dims.lhs_contract.size() != dims.rhs_contract.size())
    throw Error(std::format("dot_general requires equal numbers of lhs and rhs contracting dimensions, got lhs {} "
                            "and rhs {}",
                            dims_string(dims.lhs_contract), dims_string(dims.rhs_contract)));
  if (dims.lhs_batch.size() != dims.rhs_batch.size())
    throw Error(std::format("dot_general requires equal numbers of lhs and rhs batch dimensions, got lhs {} and "
                            "rhs {}",
                            dims_string(dims.lhs_batch), dims_string(dims.rhs_batch)));
  check_side("lhs", lhs, dims.lhs_batch, dims.lhs_contract);
  check_side("rhs", rhs, dims.rhs_batch, dims.rhs_contract);
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
  DotMapping const map = dot_mapping(dims, lhs.size(), rhs.size());
  Shape out;
  for (auto d : dims.lhs_batch) out.push_back(lhs[d]);
  for (auto d : map.lhs_free) out.push_back(lhs[d]);
  for (auto d : map.rhs_free) out.push_back(rhs[d]);
  return out;
}

DotDims matmul_dims(Shape const& a, Shape const& b) {
  auto const ra = a.size(), rb = b.size();
  if (ra == 0 || rb == 0)
    throw Error(std::format("matmul: operands must have rank at least 1, got shapes {} and {} (use multiply for "
                            "scalars)",
                            to_string(a), to_string(b)));
  auto u8 = [](std::size_t d) { return static_cast<std::uint8_t>(d); };
  // dot_shape checks the contracted sizes.
  std::size_t const bk = rb == 1 ? 0 : rb - 2;
  DotDims dims;
  dims.lhs_contract.push_back(u8(ra - 1));
  dims.rhs_contract.push_back(u8(bk));
  if (ra == 1 || rb <= 2) return dims;  // b's leading dimensions or a's stack are free dimensions
  // Both have batch dimensions (a's and b's dimensions before the last two, aligned at the right).
  std::size_t const na = ra - 2, nb = rb - 2, n = std::max(na, nb);
  bool broadcasts = na != nb;
  for (std::size_t i = 0; i < n; ++i) {
    if (i < n - na || i < n - nb) continue;
    std::int64_t da = a[i - (n - na)], db = b[i - (n - nb)];
    if (da != db && da != 1 && db != 1)
      throw Error(std::format("matmul: batch dimensions of shapes {} and {} do not broadcast: sizes {} and {}",
                              to_string(a), to_string(b), da, db));
    broadcasts = broadcasts || da != db;
  }
  if (broadcasts)
    throw Error(std::format("matmul of shapes {} and {} broadcasts batch dimensions (jnp.matmul squeezes and "
                            "transposes for that); tessel supports a 1-D operand, a 2-D right operand, or equal batch "
                            "dimensions: reshape or broadcast the operands first, or use dot_general",
                            to_string(a), to_string(b)));
  for (std::size_t d = 0; d < na; ++d) {
    dims.lhs_batch.push_back(u8(d));
    dims.rhs_batch.push_back(u8(d));
  }
  return dims;
}

}  // namespace tessel::detail
