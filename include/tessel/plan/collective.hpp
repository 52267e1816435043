#pragma once
// The collectives a plan can run: the one list their names come from, for the planner's choice
// for a reduction (NodePlan), a sharding change's steps (plan/reshard.hpp), an instruction
// (Step), the executor's counts (ExecutionCounts) and explain.
#include <array>
#include <cstddef>
#include <cstdint>

namespace tessel::plan {

enum class Collective : std::uint8_t { all_reduce, reduce_scatter, all_gather, all_to_all, collective_permute };

inline constexpr std::array all_collectives{Collective::all_reduce, Collective::reduce_scatter, Collective::all_gather,
                                            Collective::all_to_all, Collective::collective_permute};

// "all-reduce", "reduce-scatter", "all-gather", "all-to-all", "collective-permute": explain's words.
constexpr char const* name(Collective c) {
  constexpr std::array<char const*, all_collectives.size()> names{"all-reduce", "reduce-scatter", "all-gather",
                                                                 "all-to-all", "collective-permute"};
  return names[static_cast<std::size_t>(c)];
}
// "all_reduce", ...: the instruction's kind in its label (tessel::all_reduce(mp)[...]) and in JSON.
constexpr char const* id(Collective c) {
  constexpr std::array<char const*, all_collectives.size()> ids{"all_reduce", "reduce_scatter", "all_gather",
                                                               "all_to_all", "collective_permute"};
  return ids[static_cast<std::size_t>(c)];
}

// A count per collective (ExecutionCounts), indexed by the enum.
template <class T>
struct PerCollective {
  std::array<T, all_collectives.size()> values{};
  constexpr T& operator[](Collective c) { return values[static_cast<std::size_t>(c)]; }
  constexpr T const& operator[](Collective c) const { return values[static_cast<std::size_t>(c)]; }
};

}  // namespace tessel::plan
