#pragma once
// The collectives' argument checks (collectives.hpp), shared by both implementations. Each throws
// tessel::Error naming the collective, the argument and the sizes.
#include <cstddef>
#include <span>

#include "tessel/core/box.hpp"
#include "tessel/runtime/collectives.hpp"

namespace tessel::detail {

// Every member's device is one of this process's (device() throws naming the id otherwise).
void check_devices(std::span<GroupMember const> group);
// `count` boxes named `name`, one per member.
void check_count(char const* what, char const* name, std::size_t count, std::size_t members);
// Every box has rank `rank`.
void check_ranks(char const* what, char const* name, std::span<Box const> boxes, std::size_t rank);
// Whether `inner` (empty, or) lies inside `outer`.
bool inside(Box const& inner, Box const& outer);
// The bounding box of an all-gather's pieces, after checking that they tile it.
Box tiled_union(std::span<Box const> pieces);
// Every element of an all-to-all's out box k lies in exactly one in box.
void check_covered_once(std::size_t k, std::span<Box const> in_boxes, Box const& out);
// A collective-permute's pairs name members, each target once, moving boxes of equal extent.
void check_permute_pairs(std::span<Box const> in_boxes, std::span<Box const> out_boxes,
                         std::span<PermutePair const> pairs);

}  // namespace tessel::detail
