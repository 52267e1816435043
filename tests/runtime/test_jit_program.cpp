// jit of a body that evaluates tensors itself: recorded on the first call with each argument
// signature, replayed after that (runtime/program.hpp). A replay must give the bits the body gives,
// read the call's own arguments, run what the body ran, and be refused where it would not repeat
// what the body does.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <future>
#include <string>

#include "support/close.hpp"
#include "support/data.hpp"
#include "support/meshes.hpp"
#include "support/two_blocks.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using test::draw;
using test::TwoBlocks;
using Catch::Matchers::ContainsSubstring;

namespace {

long count_of(std::string const& text, std::string const& what) {
  long n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a jitted body that evaluates tensors is recorded once and replayed with the bits of the body",
          "[runtime][jit][program]") {
  for (auto const& mesh : test::all_meshes()) {
    CAPTURE(to_string(mesh));
    AxisName const a = mesh.axes().name(0);
    NamedSharding rows(mesh, P(a)), whole(mesh, P()), cols(mesh, P(None, a));
    int runs = 0;
    TwoBlocks body{&runs, cols};
    auto f = jit(body);
    auto x = draw({16, 8}, rows, 1), w1 = draw({8, 12}, whole, 2), w2 = draw({12, 8}, cols, 3);
    auto first = f(x, w1, w2, 0.5f);
    CHECK(runs == 1);
    auto before = execution_counts();
    auto second = f(x, w1, w2, 0.5f);
    CHECK(runs == 1);  // replayed: the body did not run
    auto replayed = execution_counts();
    CHECK(replayed.kernels - before.kernels > 0);
    // The replay runs what the body ran: the same kernels and collectives.
    auto again = body(x, w1, w2, 0.5f);
    auto after = execution_counts();
    CHECK(after.kernels - replayed.kernels == replayed.kernels - before.kernels);
    for (auto k : plan::all_collectives) CHECK(after[k] - replayed[k] == replayed[k] - before[k]);
    CHECK(second.sharding() == again.sharding());
    CHECK(test::bitwise_equal(second.to_host(), again.to_host()));
    CHECK(test::bitwise_equal(first.to_host(), again.to_host()));
    // ... and the bits of the same computation on one device.
    auto one = make_mesh({1}, {"x"}, {0});
    auto on_one = [&](Tensor<float> const& t) { return device_put(t.to_host(), t.shape(), replicated(one)); };
    int one_runs = 0;
    auto single = TwoBlocks{&one_runs, replicated(one)}(on_one(x), on_one(w1), on_one(w2), 0.5f);
    test::require_close(second.to_host(), single.to_host());
  }
}

TEST_CASE("a replay reads the call's own arguments, and another signature records again", "[runtime][jit][program]") {
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  NamedSharding rows(mesh, P("dp")), whole(mesh, P()), cols(mesh, P(None, "mp"));
  int runs = 0;
  TwoBlocks body{&runs, cols};
  auto f = jit(body);
  auto x = draw({16, 8}, rows, 1), w1 = draw({8, 12}, whole, 2), w2 = draw({12, 8}, cols, 3);
  (void)f(x, w1, w2, 0.5f);
  REQUIRE(runs == 1);

  SECTION("new values of the same signature") {
    auto x2 = draw({16, 8}, rows, 11), w12 = draw({8, 12}, whole, 12);
    auto got = f(x2, w12, w2, 0.5f);
    CHECK(runs == 1);
    CHECK(test::bitwise_equal(got.to_host(), body(x2, w12, w2, 0.5f).to_host()));
  }
  SECTION("another scalar value") {
    auto got = f(x, w1, w2, 2.0f);
    CHECK(runs == 2);
    CHECK(test::bitwise_equal(got.to_host(), body(x, w1, w2, 2.0f).to_host()));
    (void)f(x, w1, w2, 2.0f);
    CHECK(runs == 3);  // the body called directly above; then a replay
  }
  SECTION("another shape or sharding") {
    auto x3 = draw({32, 8}, rows, 13);
    (void)f(x3, w1, w2, 0.5f);
    CHECK(runs == 2);
    auto x4 = draw({16, 8}, whole, 14);
    auto got = f(x4, w1, w2, 0.5f);
    CHECK(runs == 3);
    CHECK(test::bitwise_equal(got.to_host(), body(x4, w1, w2, 0.5f).to_host()));
  }
  SECTION("the same tensor passed twice, then two tensors") {
    auto sq = jit([&runs](Tensor<float> const& a, Tensor<float> const& b) {
      ++runs;
      Tensor<float> s = a + b;
      return Tensor<float>(s * a);
    });
    auto y = draw({16, 8}, rows, 15);
    (void)sq(x, x);
    int const recorded = runs;
    auto got = sq(x, y);  // not the program of (x, x), which read one tensor for both
    CHECK(runs == recorded + 1);
    CHECK(test::bitwise_equal(got.to_host(), Tensor<float>((x + y) * x).to_host()));
  }
}

TEST_CASE("a jitted body's captured tensors are constants of its program, as jax.jit's closed-over arrays",
          "[runtime][jit][program]") {
  auto mesh = make_mesh({8}, {"x"});
  NamedSharding rows(mesh, P("x"));
  auto bias = draw({16}, rows, 4);
  auto f = jit([&bias](Tensor<float> const& x) {
    Tensor<float> y = x * 2.0f;
    return Tensor<float>(y + bias);
  });
  auto x = draw({16}, rows, 5);
  auto old = bias;
  (void)f(x);
  bias = draw({16}, rows, 6);
  // The program holds the tensor the first call read; pass what changes as an argument.
  CHECK(test::bitwise_equal(f(x).to_host(), Tensor<float>(x * 2.0f + old).to_host()));
}

TEST_CASE("a jitted body a replay would not repeat runs on every call, and explain says why",
          "[runtime][jit][program]") {
  auto mesh = make_mesh({8}, {"x"});
  NamedSharding rows(mesh, P("x"));
  auto x = draw({16}, rows, 7);
  int runs = 0;
  SECTION("a random draw") {
    auto f = jit([&](Tensor<float> const& v) {
      ++runs;
      Tensor<float> noise = random::normal(PRNGKey(runs), {16}, rows);
      return Tensor<float>(v + noise);
    });
    auto a = f(x), b = f(x);
    CHECK(runs == 2);
    CHECK_FALSE(test::bitwise_equal(a.to_host(), b.to_host()));  // each call drew its own
    CHECK_THAT(f.explain(x), ContainsSubstring("not recorded (a replay would not repeat a random draw)"));
  }
  SECTION("host data") {
    auto f = jit([&](Tensor<float> const& v) {
      ++runs;
      return Tensor<float>(v + device_put(std::vector<float>(16, float(runs)), {16}, rows));
    });
    (void)f(x);
    (void)f(x);
    CHECK(runs == 2);
    CHECK_THAT(f.explain(x), ContainsSubstring("device_put of host data"));
  }
  SECTION("a read to the host") {
    auto f = jit([&](Tensor<float> const& v) {
      ++runs;
      Tensor<float> y = v * 2.0f;
      return y.to_host()[0] > 0 ? y : Tensor<float>(-y);  // control flow on a value
    });
    (void)f(x);
    (void)f(x);
    CHECK(runs == 2);
    CHECK_THAT(f.explain(x), ContainsSubstring("to_host"));
  }
  SECTION("an evaluation on another thread") {
    auto f = jit([&](Tensor<float> const& v) {
      ++runs;
      auto doubled = std::async(std::launch::async, [&] { return Tensor<float>(v * 2.0f); });
      return Tensor<float>(doubled.get() + 1.0f);
    });
    auto y = draw({16}, rows, 8);
    (void)f(x);
    auto got = f(y);  // a replay would have read the first call's doubled x
    CHECK(runs == 2);
    CHECK(test::bitwise_equal(got.to_host(), Tensor<float>(y * 2.0f + 1.0f).to_host()));
    CHECK_THAT(f.explain(x), ContainsSubstring("tensors made on another thread while the body ran"));
  }
  SECTION("an argument of another kind") {
    auto f = jit([&](Tensor<float> const& v, std::string const&) {
      ++runs;
      return Tensor<float>(v * 2.0f);
    });
    (void)f(x, std::string("a"));
    (void)f(x, std::string("a"));
    CHECK(runs == 2);
  }
}

TEST_CASE("explain of a recorded body runs nothing and lists each distinct plan once", "[runtime][jit][program]") {
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  NamedSharding rows(mesh, P("dp")), cols(mesh, P(None, "mp"));
  auto x = draw({16, 8}, rows, 8), w = draw({8, 8}, cols, 9);
  int runs = 0;
  auto layer = jit([](auto const& h, auto const& w) { return relu(h.matmul(w)) + h; });
  auto f = jit([&](Tensor<float> const& h0, Tensor<float> const& w) {
    ++runs;
    Tensor<float> h = h0;
    for (int l = 0; l < 4; ++l) h = layer(h, w);  // a jitted function inside: its plan is a step
    return h;
  });
  auto y = f(x, w);
  auto before = execution_counts();
  std::string const text = f.explain(x, w);
  CHECK(runs == 1);
  CHECK(execution_counts().kernels == before.kernels);
  // The first layer reads h0 as P('dp'), the others their predecessor's P('dp', 'mp').
  CHECK_THAT(text, ContainsSubstring("a recorded program: 4 steps (4 evaluations of 2 distinct plans, 0 reshards)"));
  CHECK_THAT(text, ContainsSubstring("-- plan 1, run at step 1:"));
  CHECK_THAT(text, ContainsSubstring("-- plan 2, run at steps 2, 3, 4:"));
  CHECK(count_of(text, "cost model:") == 2);  // each plan printed once, not once per step
  CHECK(test::bitwise_equal(f(x, w).to_host(), y.to_host()));
  CHECK(runs == 1);

  // explain before any call records the program with one run, which the next call replays.
  auto g = jit([&](Tensor<float> const& h0, Tensor<float> const& w) {
    ++runs;
    return layer(layer(h0, w), w);
  });
  (void)g.explain(x, w);
  (void)g(x, w);
  CHECK(runs == 2);
}

TEST_CASE("a body that throws while recorded leaves nothing recorded", "[runtime][jit][program][error]") {
  auto mesh = make_mesh({8}, {"x"});
  NamedSharding rows(mesh, P("x"));
  auto x = draw({16}, rows, 10);
  auto bad = draw({12}, rows, 11);
  int runs = 0;
  auto f = jit([&](Tensor<float> const& a, Tensor<float> const& b) {
    ++runs;
    Tensor<float> y = a * 2.0f;
    return Tensor<float>(y + b);
  });
  CHECK_THROWS_WITH(f(x, bad), ContainsSubstring("shapes (16,) and (12,)"));
  auto good = draw({16}, rows, 12);
  auto got = f(x, good);
  CHECK(test::bitwise_equal(got.to_host(), Tensor<float>(x * 2.0f + good).to_host()));
  (void)f(x, good);
  CHECK(runs == 2);  // a throw, then a recording; the last call replayed
}

TEST_CASE("a jitted body returns several tensors, as jax.jit returns a tuple, recorded as one program",
          "[runtime][jit][program]") {
  for (auto const& mesh : test::all_meshes()) {
    CAPTURE(to_string(mesh));
    NamedSharding rows(mesh, P(mesh.axes().name(0)));
    int runs = 0;
    // Expressions in the tuple are evaluated; one result is an int32 argmax, one a plain tensor.
    auto f = jit([&runs](Tensor<float> const& a, Tensor<float> const& b) {
      ++runs;
      Tensor<float> s = a + b;
      return std::tuple{s * 2.0f, argmax(s, 1), b};
    });
    auto a = draw({16, 8}, rows, 1), b = draw({16, 8}, rows, 2);
    auto [twice, best, same] = f(a, b);
    static_assert(std::same_as<decltype(best), Tensor<std::int32_t>>);
    CHECK(runs == 1);
    auto a2 = draw({16, 8}, rows, 3);
    auto [twice2, best2, same2] = f(a2, b);  // replayed with the new argument
    CHECK(runs == 1);
    CHECK(test::bitwise_equal(twice2.to_host(), eval((a2 + b) * 2.0f).to_host()));
    CHECK(best2.to_host() == eval(argmax(a2 + b, 1)).to_host());
    CHECK(same2.impl_ptr() == b.impl_ptr());  // an argument returned is the argument
    CHECK(test::bitwise_equal(twice.to_host(), eval((a + b) * 2.0f).to_host()));
    CHECK_THAT(f.explain(a, b), ContainsSubstring("a recorded program: 3 steps"));  // a + b, then each expression
  }
}

TEST_CASE("a jitted body takes and returns lists of tensors (a model's caches), one program per length",
          "[runtime][jit][program]") {
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  NamedSharding cols(mesh, P(None, "mp"));
  int runs = 0;
  auto step = jit([&runs](std::vector<Tensor<float>> const& caches, Tensor<float> const& x, Tensor<std::int32_t> const& at) {
    ++runs;
    std::vector<Tensor<float>> out;
    for (auto const& c : caches) out.push_back(lax::dynamic_update_slice_in_dim(c, x, at, 0));
    return out;
  });
  auto pos = [&](int p) { return device_put(std::vector<std::int32_t>{p}, Shape{}, NamedSharding(mesh, P())); };
  std::vector<Tensor<float>> caches{draw({6, 8}, cols, 1), draw({6, 8}, cols, 2)};
  auto x = draw({1, 8}, cols, 3);
  auto first = step(caches, x, pos(0));
  REQUIRE(first.size() == 2);
  for (int p : {1, 5, 3}) {
    auto got = step(caches, x, pos(p));
    CHECK(runs == 1);  // one recording serves every position
    for (std::size_t k = 0; k < 2; ++k)
      CHECK(test::bitwise_equal(got[k].to_host(), eval(lax::dynamic_update_slice_in_dim(caches[k], x, p, 0)).to_host()));
  }
  caches.push_back(draw({6, 8}, cols, 4));
  CHECK(step(caches, x, pos(2)).size() == 3);
  CHECK(runs == 2);  // another length records again
  CHECK(step.memory_analysis(caches, x, pos(2)).peak_bytes > 0);
}
