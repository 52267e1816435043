// Reshards that are one collective run as that collective (runtime/reshard.hpp) and give the same
// values as the generic copies, on 1-D, 2-D, 3-D and non-square scrambled meshes.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "support/data.hpp"
#include "support/meshes.hpp"
#include "tessel/runtime/reshard.hpp"
#include "tessel/runtime/backend/copy_shape.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace tessel;

namespace {

struct Case {
  PartitionSpec from, to;
  std::optional<plan::Collective> ran;  // the collective expected to run (none: copies)
};

template <class T>
void check_case(Mesh const& mesh, Shape const& shape, Case const& c) {
  auto data = test::iota_data<T>(shape, T(1));
  auto x = device_put(data, shape, NamedSharding(mesh, c.from));
  NamedSharding target(mesh, c.to);
  INFO(to_string(mesh) << " " << to_string(c.from) << " -> " << to_string(c.to));
  auto done = detail::reshard_with_collectives(x.impl(), target);
  CHECK(done.collective == c.ran);
  Tensor<T> y(done.tensor);
  CHECK(y.sharding() == target);
  CHECK(test::shards_match(y, data));
  CHECK(test::bitwise_equal(y.to_host(), data));
  CHECK(test::shards_match(x, data));  // the source is untouched
}

constexpr auto gather = plan::Collective::all_gather;
constexpr auto a2a = plan::Collective::all_to_all;
constexpr auto permute = plan::Collective::collective_permute;

}  // namespace

TEST_CASE("each reshard kind runs as its collective and keeps the values", "[runtime][reshard][collectives]") {
  SECTION("1-D mesh") {
    auto m = make_mesh({8}, {"x"});
    for (auto const& c : std::vector<Case>{{P("x"), P(), gather},
                                           {P("x"), P(None, "x"), a2a},
                                           {P(None, "x"), P("x"), a2a},
                                           {P(), P("x"), std::nullopt}}) {
      check_case<float>(m, {16, 24}, c);
      check_case<double>(m, {16, 24}, c);
      check_case<std::int32_t>(m, {16, 24}, c);
    }
  }
  SECTION("2x4 and 4x2 meshes") {
    for (auto const& m : {make_mesh({2, 4}, {"a", "b"}), make_mesh({4, 2}, {"a", "b"})})
      for (auto const& c : std::vector<Case>{{P("a", "b"), P("a"), gather},
                                             {P("a", "b"), P(), gather},
                                             {P({"a", "b"}), P("a"), gather},
                                             {P("a", "b"), P(None, "b"), gather},
                                             {P({"a", "b"}), P("a", "b"), a2a},
                                             {P("a", "b"), P("b", "a"), a2a},
                                             {P("b"), P(None, None, "b"), a2a},
                                             {P({"a", "b"}), P({"b", "a"}), permute},
                                             {P("a"), P("b"), a2a},  // one exchange of the new blocks
                                             {P("a", None), P(None, "b"), std::nullopt},  // slice, then gather
                                             {P("a"), P("a", "b"), std::nullopt}})
        check_case<float>(m, {16, 8, 8}, c);
  }
  SECTION("2x2x2 mesh") {
    auto m = make_mesh({2, 2, 2}, {"a", "b", "c"});
    for (auto const& c : std::vector<Case>{{P("a", "b", "c"), P("c", "b", "a"), permute},
                                           {P("a", "b", "c"), P(None, "b"), gather},
                                           {P({"a", "b", "c"}), P({"c", "b", "a"}), permute},
                                           {P({"a", "b"}), P("a", "b"), a2a},
                                           {P("a", None, "c"), P(None, "a", "c"), a2a},
                                           {P("a", "b", "c"), P(), gather},
                                           {P("a"), P("b"), permute},
                                           {P(None, None, "a"), P("b", "a"), a2a}})
      check_case<float>(m, {8, 8, 8}, c);
  }
  SECTION("a non-square mesh over scrambled devices") {
    auto m = make_mesh({3, 2}, {"a", "b"}, {5, 0, 3, 1, 7, 2});
    for (auto const& c : std::vector<Case>{{P("a", "b"), P("b", "a"), a2a},
                                           {P("a"), P(), gather},
                                           {P("a", "b"), P("a"), gather},
                                           {P({"a", "b"}), P({"b", "a"}), permute},
                                           {P("b"), P("a"), a2a}})
      check_case<float>(m, {12, 6}, c);
  }
}

TEST_CASE("reshards and all-reduces too large for the cache (non-temporal stores) keep every bit",
          "[runtime][reshard][collectives]") {
  // Outputs this large take the streaming stores where the copy shape has them (copies_on::streams:
  // 32 MB in all on a host); rows of 1025 floats per block leave every run's start and end off the
  // vector alignment.
  using Copies = backend::copies_on<ExecSpace>;
  REQUIRE((Copies::streams(1024 * 8200 * sizeof(float)) || !Copies::streams(~std::size_t{0})));
  Shape shape{1024, 8200};
  for (auto const& mesh : {make_mesh({8}, {"x"}), make_mesh({2, 4}, {"a", "b"})}) {
    PartitionSpec rows = mesh.axes().num_axes() == 1 ? P("x", None) : P("a", "b");
    PartitionSpec cols = mesh.axes().num_axes() == 1 ? P(None, "x") : P("b", "a");
    check_case<float>(mesh, shape, {rows, cols, a2a});
    check_case<float>(mesh, shape, {rows, P(), gather});
  }
  // An all-reduce of 8 partial sums of 2 Mi floats each (64 MB of outputs), against the sum
  // computed unsharded: the same bits, since every element adds the same values in the same order.
  auto mesh = make_mesh({8}, {"x"});
  Shape big{8, 1 << 21};
  auto data = test::iota_data<float>(big, 0.5f);
  auto x = device_put(data, big, NamedSharding(mesh, P("x", None)));
  auto whole = eval(sum(device_put(data, big, NamedSharding(make_mesh({1}, {"x"}, {0}), P())), 0)).to_host();
  auto before = execution_counts()[plan::Collective::all_reduce];
  auto got = eval(sum(x, 0)).to_host();
  CHECK(execution_counts()[plan::Collective::all_reduce] == before + 1);
  CHECK(test::bitwise_equal(got, whole));
}

TEST_CASE("reshards between meshes over the same devices run as a permute when blocks only move",
          "[runtime][reshard][collectives]") {
  Shape shape{64, 16};
  auto data = test::iota_data<double>(shape);
  auto flat = make_mesh({8}, {"data"});
  auto reversed = make_mesh({8}, {"data"}, {7, 6, 5, 4, 3, 2, 1, 0});
  auto grid = make_mesh({4, 2}, {"dp", "mp"}, {3, 1, 2, 0, 7, 5, 6, 4});
  auto x = device_put(data, shape, NamedSharding(flat, P("data")));
  for (auto const& [target, ran] : std::vector<std::pair<NamedSharding, std::optional<plan::Collective>>>{
           {NamedSharding(reversed, P("data")), permute},
           {NamedSharding(grid, P({"mp", "dp"})), permute},
           {NamedSharding(grid, P("mp", "dp")), std::nullopt}}) {
    INFO(to_string(target));
    auto done = detail::reshard_with_collectives(x.impl(), target);
    CHECK(done.collective == ran);
    Tensor<double> y(done.tensor);
    CHECK(test::shards_match(y, data));
    CHECK(test::bitwise_equal(y.to_host(), data));
  }
}

TEST_CASE("every single-collective reshard between two specs runs as that collective", "[runtime][reshard][property]") {
  // Against the classification: whenever it is one all-gather, all-to-all or permute, that
  // collective runs, and the result equals the host data bit for bit.
  for (auto const& mesh : test::all_meshes()) {
    Shape shape{24, 48};
    auto data = test::iota_data<float>(shape, 0.25f);
    auto specs = test::all_specs(mesh.axes(), 2);
    for (std::size_t i = 0; i < specs.size(); ++i) {
      auto x = device_put(data, shape, NamedSharding(mesh, specs[i]));
      for (std::size_t step : {std::size_t{1}, std::size_t{3}, std::size_t{7}, specs.size() / 2}) {
        NamedSharding target(mesh, specs[(i + step) % specs.size()]);
        INFO(to_string(mesh) << " " << to_string(specs[i]) << " -> " << to_string(target.spec()));
        auto steps = plan::decompose(shape, sizeof(float), x.sharding(), target);
        auto done = detail::reshard_with_collectives(x.impl(), target);
        bool one = steps.size() == 1 && steps[0].collective.has_value();
        REQUIRE(done.collective.has_value() == one);
        if (one) REQUIRE(*done.collective == *steps[0].collective);
        REQUIRE(test::bitwise_equal(Tensor<float>(done.tensor).to_host(), data));
      }
    }
  }
}

TEST_CASE("reshard_counted counts the collective that ran", "[runtime][reshard][collectives]") {
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  auto x = device_put(test::iota_data<float>(Shape{16, 16}), Shape{16, 16}, NamedSharding(mesh, P("a", "b")));
  auto before = execution_counts();
  (void)detail::reshard_counted(x.impl_ptr(), NamedSharding(mesh, P("a")));
  (void)detail::reshard_counted(x.impl_ptr(), NamedSharding(mesh, P("b", "a")));
  (void)detail::reshard_counted(x.impl_ptr(), NamedSharding(mesh, P("b")));  // one exchange over ('a', 'b')
  auto after = execution_counts();
  CHECK(after.reshards == before.reshards + 3);
  CHECK(after[plan::Collective::all_gather] == before[plan::Collective::all_gather] + 1);
  CHECK(after[plan::Collective::all_to_all] == before[plan::Collective::all_to_all] + 2);
  CHECK(after[plan::Collective::collective_permute] == before[plan::Collective::collective_permute]);
}

TEST_CASE("a reshard by collectives fails like one by copies, before touching anything", "[runtime][reshard][error]") {
  auto low = make_mesh({4}, {"x"}, {0, 1, 2, 3});
  auto high = make_mesh({4}, {"x"}, {4, 5, 6, 7});
  auto data = test::iota_data<float>(Shape{16, 6});
  auto x = device_put(data, Shape{16, 6}, NamedSharding(low, P("x")));
  CHECK_THROWS_WITH(detail::reshard_with_collectives(x.impl(), NamedSharding(high, P("x"))),
                    ContainsSubstring("the tensor is on Mesh('x': 4; devices [0 1 2 3]) but the target sharding"));
  CHECK(test::shards_match(x, data));
  // An axis move (an all-to-all) to a dimension the axis does not divide: blocks of 2 columns,
  // the last device's empty.
  Tensor<float> y(detail::reshard_with_collectives(x.impl(), NamedSharding(low, P(None, "x"))).tensor);
  CHECK(y.addressable_shards()[3].shape == Shape{16, 0});
  CHECK(test::shards_match(y, data));
  CHECK(test::bitwise_equal(y.to_host(), data));
}
