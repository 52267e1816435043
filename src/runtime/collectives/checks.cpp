// The collectives' argument checks (collectives.hpp: all before any buffer is touched), shared by
// the in-process and the across-processes implementations so that a bad call fails the same way.
#include "checks.hpp"

#include <algorithm>
#include <format>
#include <string>
#include <vector>

#include "tessel/core/error.hpp"
#include "tessel/runtime/device.hpp"

namespace tessel::detail {

void check_devices(std::span<GroupMember const> group) {
  for (auto const& m : group) (void)device(m.device);  // throws naming the id and the device count
}

void check_count(char const* what, char const* name, std::size_t count, std::size_t members) {
  if (count != members)
    throw Error(std::format("{}: {} {} for a group of {} members (one per member)", what, count, name, members));
}

void check_ranks(char const* what, char const* name, std::span<Box const> boxes, std::size_t rank) {
  for (std::size_t k = 0; k < boxes.size(); ++k)
    if (boxes[k].size() != rank)
      throw Error(std::format("{}: {}[{}] {} has rank {} but the collective's boxes have rank {}", what, name, k,
                              to_string(boxes[k]), boxes[k].size(), rank));
}

bool inside(Box const& inner, Box const& outer) {
  if (inner.empty()) return true;
  for (std::size_t d = 0; d < inner.size(); ++d)
    if (inner[d].start < outer[d].start || inner[d].stop > outer[d].stop) return false;
  return true;
}

// The bounding box of the pieces, after checking that they tile it.
Box tiled_union(std::span<Box const> pieces) {
  Box whole = pieces[0];  // when every piece is empty, the union is empty
  bool any = false;
  std::int64_t covered = 0;
  for (auto const& piece : pieces) {
    if (piece.empty()) continue;
    covered += piece.num_elements();
    if (!any) {
      whole = piece;
      any = true;
      continue;
    }
    for (std::size_t d = 0; d < piece.size(); ++d)
      whole[d] = {std::min(whole[d].start, piece[d].start), std::max(whole[d].stop, piece[d].stop)};
  }
  for (std::size_t a = 0; a < pieces.size(); ++a)
    for (std::size_t b = a + 1; b < pieces.size(); ++b)
      if (!intersect(pieces[a], pieces[b]).empty())
        throw Error(std::format("all_gather: the pieces do not tile their union {}: pieces[{}] {} and pieces[{}] {} "
                                "overlap",
                                to_string(whole), a, to_string(pieces[a]), b, to_string(pieces[b])));
  if (covered != whole.num_elements())
    throw Error(std::format("all_gather: the pieces do not tile their union {}: they cover {} of its {} elements",
                            to_string(whole), covered, whole.num_elements()));
  return whole;
}

// Every element of out box k lies in exactly one in box.
void check_covered_once(std::size_t k, std::span<Box const> in_boxes, Box const& out) {
  if (out.empty()) return;
  std::int64_t covered = 0;
  for (std::size_t a = 0; a < in_boxes.size(); ++a) {
    Box part = intersect(out, in_boxes[a]);
    if (part.empty()) continue;
    covered += part.num_elements();
    for (std::size_t b = a + 1; b < in_boxes.size(); ++b)
      if (!intersect(part, in_boxes[b]).empty())
        throw Error(std::format("all_to_all: in_boxes[{}] {} and in_boxes[{}] {} overlap inside out_boxes[{}] {}; "
                                "every element must come from one member",
                                a, to_string(in_boxes[a]), b, to_string(in_boxes[b]), k, to_string(out)));
  }
  if (covered != out.num_elements())
    throw Error(std::format("all_to_all: out_boxes[{}] {} is not covered by the members' in boxes: {} of its {} "
                            "elements lie in none of them",
                            k, to_string(out), out.num_elements() - covered, out.num_elements()));
}

void check_permute_pairs(std::span<Box const> in_boxes, std::span<Box const> out_boxes,
                         std::span<PermutePair const> pairs) {
  char const* what = "collective_permute";
  int n = static_cast<int>(in_boxes.size());
  std::vector<int> source_of(in_boxes.size(), -1);
  for (auto [s, t] : pairs) {
    for (int m : {s, t})
      if (m < 0 || m >= n)
        throw Error(std::format("{}: pair ({}, {}) names member {} but the group has {} members{}", what, s, t, m, n,
                                n > 0 ? std::format(" (0..{})", n - 1) : std::string()));
    auto& src = source_of[static_cast<std::size_t>(t)];
    if (src >= 0)
      throw Error(std::format("{}: member {} is the target of two pairs, ({}, {}) and ({}, {}); a member can receive "
                              "from one source only",
                              what, t, src, t, s, t));
    src = s;
    Box const& from = in_boxes[static_cast<std::size_t>(s)];
    Box const& to = out_boxes[static_cast<std::size_t>(t)];
    if (from.extent() != to.extent())
      throw Error(std::format("{}: pair ({}, {}) moves in_boxes[{}] {} of shape {} into out_boxes[{}] {} of shape {}; "
                              "the shapes must be equal",
                              what, s, t, s, to_string(from), to_string(from.extent()), t, to_string(to),
                              to_string(to.extent())));
  }
}

}  // namespace tessel::detail
