// Many processes, one program: run under mpirun with 1, 2, 4 or 8 processes and 8 / N devices
// each (CTest does, tests/CMakeLists.txt). Every sharded result is brought to every process with
// process_allgather and checked against the same computation on one of this process's devices
// (bitwise where the single-device result is the same value, within rounding for reductions
// whose order the sharding changes). Its bits are also hashed: the run with one process writes
// the hashes (TESSEL_MPI_DIGESTS, mode "write"), and the runs with several compare theirs (mode
// "compare"), so a result is bit-identical however the 8 devices are spread over processes.
#include <catch2/catch_session.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "support/digest.hpp"
#include "support/meshes.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using Catch::Matchers::ContainsSubstring;

namespace {

std::vector<std::pair<std::string, std::uint64_t>>& digests() {
  static std::vector<std::pair<std::string, std::uint64_t>> d;
  return d;
}

template <class T>
void record(std::string const& name, std::vector<T> const& v) {
  digests().emplace_back(name, test::bits_digest(v));
}

std::vector<float> data(std::int64_t n, std::uint32_t seed) {
  std::vector<float> v(static_cast<std::size_t>(n));
  std::uint32_t s = seed;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(static_cast<int>(s >> 9) % 2001 - 1000) / 256.0f;
  }
  return v;
}

// One of this process's devices, alone: the unsharded reference.
NamedSharding here() { return detail::single_device_sharding(distributed::local_devices()[0]); }

// A few shardings of each mesh: the first, the last and some between (every sharding of every
// mesh would take minutes with 8 processes on 2 cores).
std::vector<NamedSharding> some_shardings(Mesh const& mesh, Shape const& shape, std::size_t most = 5) {
  auto all = test::shardings_of(mesh, shape);
  if (all.size() <= most) return all;
  std::vector<NamedSharding> out;
  for (std::size_t k = 0; k < most; ++k) out.push_back(all[k * (all.size() - 1) / (most - 1)]);
  return out;
}

std::string name_of(Mesh const& mesh, NamedSharding const& s) { return to_string(mesh) + " " + to_string(s.spec()); }

void check_close(std::vector<float> const& got, std::vector<float> const& want, float tolerance) {
  REQUIRE(got.size() == want.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    INFO("element " << k << ": " << got[k] << " vs " << want[k]);
    REQUIRE(std::abs(got[k] - want[k]) <= tolerance * (1 + std::abs(want[k])));
  }
}

}  // namespace

TEST_CASE("the process model: global devices, ordered by process, and this process's own") {
  int const n = distributed::process_count();
  REQUIRE(device_count() == local_device_count() * n);
  REQUIRE(device_count() == 8);
  auto local = distributed::local_devices();
  REQUIRE(static_cast<int>(local.size()) == local_device_count());
  for (int id : local) {
    CHECK(distributed::process_of(id) == distributed::process_index());
    CHECK(is_local_device(id));
  }
  CHECK(distributed::devices().size() == 8);
  if (n > 1) {
    int other = (local.back() + 1) % 8;
    CHECK_THROWS_WITH(device(other), ContainsSubstring("belongs to process " +
                                                       std::to_string(distributed::process_of(other))));
  }
}

TEST_CASE("device_put and process_allgather give every process the whole tensor; to_host says when it cannot") {
  Shape shape{8, 12};
  auto host = data(shape.num_elements(), 1);
  for (auto const& mesh : test::all_meshes())
    for (auto const& s : some_shardings(mesh, shape)) {
      INFO(name_of(mesh, s));
      auto x = device_put(host, shape, s);
      REQUIRE(process_allgather(x) == host);
      bool whole = x.is_fully_addressable();
      if (whole) CHECK(x.to_host() == host);
      else CHECK_THROWS_WITH(x.to_host(), ContainsSubstring("process_allgather"));
      std::size_t local = 0;
      for (int id : mesh.device_ids()) local += is_local_device(id);
      CHECK(x.addressable_shards().size() == local);
    }
}

TEST_CASE("make_array_from_process_local_data takes each process's part; a part of the wrong size is an error") {
  Shape shape{8, 12};
  auto host = data(shape.num_elements(), 12);
  for (auto const& mesh : test::all_meshes())
    for (auto const& s : some_shardings(mesh, shape)) {
      INFO(name_of(mesh, s));
      auto probe = device_put(host, shape, s);  // which box this process holds
      auto held = detail::local_box(probe.impl());
      std::vector<float> part;
      if (held) {
        Box const& box = *held;
        for (std::int64_t r = box[0].start; r < box[0].stop; ++r)
          for (std::int64_t c = box[1].start; c < box[1].stop; ++c) part.push_back(host[static_cast<std::size_t>(r * 12 + c)]);
      }
      auto x = make_array_from_process_local_data(s, part, shape);
      REQUIRE(process_allgather(x) == host);
      part.push_back(0);
      CHECK_THROWS_WITH(make_array_from_process_local_data(s, part, shape),
                        ContainsSubstring("its local data has " + std::to_string(part.size()) + " elements"));
    }
}

TEST_CASE("elementwise programs and reshards are bitwise those of one device") {
  Shape shape{8, 12};
  auto hx = data(shape.num_elements(), 2), hy = data(shape.num_elements(), 3);
  auto rx = device_put(hx, shape, here()), ry = device_put(hy, shape, here());
  Tensor<float> want = tanh(rx) * ry + 1.0f;
  auto want_host = want.to_host();
  for (auto const& mesh : test::all_meshes()) {
    auto shardings = some_shardings(mesh, shape);
    for (std::size_t i = 0; i < shardings.size(); ++i) {
      auto const& sx = shardings[i];
      auto const& sy = shardings[(i + 1) % shardings.size()];
      INFO(name_of(mesh, sx) << " with " << to_string(sy.spec()));
      auto x = device_put(hx, shape, sx), y = device_put(hy, shape, sy);
      Tensor<float> z = tanh(x) * y + 1.0f;
      auto got = process_allgather(z);
      REQUIRE(got == want_host);
      record("elementwise " + name_of(mesh, sx), got);
      auto moved = device_put(x, sy);  // a reshard: collectives or copies across processes
      REQUIRE(process_allgather(moved) == hx);
    }
  }
}

TEST_CASE("reductions over sharded axes match one device within rounding, and every process layout bitwise") {
  Shape shape{8, 12};
  auto hx = data(shape.num_elements(), 4);
  auto rx = device_put(hx, shape, here());
  for (auto const& mesh : test::all_meshes())
    for (auto const& s : some_shardings(mesh, shape)) {
      INFO(name_of(mesh, s));
      auto x = device_put(hx, shape, s);
      for (int axis : {0, 1}) {
        Tensor<float> got = sum(x * x, {axis});
        Tensor<float> want = sum(rx * rx, {axis});
        auto g = process_allgather(got);
        check_close(g, want.to_host(), 1e-5f);
        record("sum " + std::to_string(axis) + " " + name_of(mesh, s), g);
        Tensor<float> m = max(x, {axis});
        Tensor<float> mw = max(rx, {axis});
        REQUIRE(process_allgather(m) == mw.to_host());
      }
      Tensor<float> all = mean(x);
      Tensor<float> all_want = mean(rx);
      check_close(process_allgather(all), all_want.to_host(), 1e-5f);
      // bfloat16: partial sums rounded per device, combined in float32 in member order and
      // rounded once; the digests compare the bits across process counts.
      Tensor<bfloat16> hsum = sum(astype<bfloat16>(x), {0});
      std::vector<float> hs;
      for (auto h : process_allgather(hsum)) hs.push_back(static_cast<float>(h));
      check_close(hs, Tensor<float>(sum(rx, {0})).to_host(), 2e-2f);
      record("bfloat16 sum " + name_of(mesh, s), hs);
    }
}

TEST_CASE("dot_general on every 2-D mesh's spec pairs matches one device, and every process layout bitwise") {
  Shape xs{8, 16}, ws{16, 8};
  auto hx = data(xs.num_elements(), 5), hw = data(ws.num_elements(), 6);
  Tensor<float> want = matmul(device_put(hx, xs, here()), device_put(hw, ws, here()));
  auto want_host = want.to_host();
  for (auto const& mesh : test::all_meshes()) {
    if (mesh.axes().num_axes() != 2) continue;
    auto sxs = some_shardings(mesh, xs, 4), sws = some_shardings(mesh, ws, 4);
    for (auto const& sx : sxs)
      for (auto const& sw : sws) {
        INFO(name_of(mesh, sx) << " @ " << to_string(sw.spec()));
        Tensor<float> y = matmul(device_put(hx, xs, sx), device_put(hw, ws, sw));
        auto got = process_allgather(y);
        check_close(got, want_host, 1e-5f);
        record("dot " + name_of(mesh, sx) + " @ " + to_string(sw.spec()), got);
      }
  }
}

TEST_CASE("views, cumsum, argmax and take over sharded axes match one device") {
  Shape shape{8, 12};
  auto hx = data(shape.num_elements(), 7);
  auto rx = device_put(hx, shape, here());
  Tensor<float> t_want = transpose(rx) * 2.0f;
  Tensor<float> c_want = cumsum(rx, 0);
  Tensor<std::int32_t> a_want = argmax(rx, 1);
  std::vector<std::int32_t> hi{3, 0, 7, 7, 1, 5, 2, 6};
  Tensor<float> g_want = take(rx, device_put(hi, Shape{8}, here()), 0);
  for (auto const& mesh : test::all_meshes())
    for (auto const& s : some_shardings(mesh, shape, 4)) {
      INFO(name_of(mesh, s));
      auto x = device_put(hx, shape, s);
      Tensor<float> t = transpose(x) * 2.0f;
      REQUIRE(process_allgather(t) == t_want.to_host());
      Tensor<float> c = cumsum(x, 0);
      auto cg = process_allgather(c);
      check_close(cg, c_want.to_host(), 1e-5f);
      record("cumsum " + name_of(mesh, s), cg);
      Tensor<std::int32_t> a = argmax(x, 1);
      REQUIRE(process_allgather(a) == a_want.to_host());
      NamedSharding replicated(mesh, P());
      Tensor<float> g = take(x, device_put(hi, Shape{8}, replicated), 0);
      REQUIRE(process_allgather(g) == g_want.to_host());
    }
}

TEST_CASE("random draws give each process its own shards of the same global values") {
  Shape shape{8, 12};
  auto key = random::PRNGKey(11);
  auto want = random::uniform<float>(key, shape, here()).to_host();
  for (auto const& mesh : test::all_meshes())
    for (auto const& s : some_shardings(mesh, shape, 3)) {
      INFO(name_of(mesh, s));
      REQUIRE(process_allgather(random::uniform<float>(key, shape, s)) == want);
    }
}

TEST_CASE("uneven shapes (7 x 13 on every mesh: short and empty blocks) across processes have one device's bits") {
  Shape shape{7, 13}, ws{13, 5};
  auto hx = data(shape.num_elements(), 21), hw = data(ws.num_elements(), 22);
  auto rx = device_put(hx, shape, here()), rw = device_put(hw, ws, here());
  Tensor<float> e_want = tanh(rx) * 2.0f + 1.0f;
  Tensor<float> s_want = sum(rx, {0});
  Tensor<float> d_want = matmul(rx, rw);
  Tensor<std::int32_t> a_want = argmax(rx, 0);
  for (auto const& mesh : test::all_meshes())
    for (auto const& s : some_shardings(mesh, shape, 4)) {
      INFO(name_of(mesh, s));
      auto probe = device_put(hx, shape, s);
      auto held = detail::local_box(probe.impl());
      std::vector<float> part;
      if (held)
        for (std::int64_t r = (*held)[0].start; r < (*held)[0].stop; ++r)
          for (std::int64_t c = (*held)[1].start; c < (*held)[1].stop; ++c)
            part.push_back(hx[static_cast<std::size_t>(r * 13 + c)]);
      auto x = make_array_from_process_local_data(s, part, shape);
      REQUIRE(process_allgather(x) == hx);
      Tensor<float> e = tanh(x) * 2.0f + 1.0f;
      REQUIRE(process_allgather(e) == e_want.to_host());
      auto sg = process_allgather(Tensor<float>(sum(x, {0})));
      check_close(sg, s_want.to_host(), 1e-5f);
      record("uneven sum " + name_of(mesh, s), sg);
      REQUIRE(process_allgather(Tensor<std::int32_t>(argmax(x, 0))) == a_want.to_host());
      NamedSharding ws_sharding(mesh, P(s.spec().size() > 1 ? s.spec()[1] : DimSpec()));
      auto dg = process_allgather(Tensor<float>(matmul(x, device_put(hw, ws, ws_sharding))));
      check_close(dg, d_want.to_host(), 1e-5f);
      record("uneven dot " + name_of(mesh, s), dg);
      auto moved = device_put(x, some_shardings(mesh, shape, 4).back());
      REQUIRE(process_allgather(moved) == hx);
    }
}

TEST_CASE("processes about to run different plans all fail, naming the processes, instead of hanging") {
  if (distributed::process_count() == 1) return;
  auto mesh = make_mesh({8}, {"x"});
  Shape shape{8, 4};
  auto x = device_put(data(shape.num_elements(), 9), shape, NamedSharding(mesh, P("x")));
  auto differ = [&] {
    if (distributed::process_index() == 0) {
      Tensor<float> y = sum(x + 1.0f, {0});
    } else {
      Tensor<float> y = sum(x * 3.0f, {0});
    }
  };
  CHECK_THROWS_WITH(differ(), ContainsSubstring("processes are about to run different plans") &&
                                  ContainsSubstring("process 1:") &&
                                  ContainsSubstring("instruction 0 differs; this process's is 'tessel::") &&
                                  ContainsSubstring(distributed::process_index() == 0 ? "add" : "mul"));
  // Afterwards the processes still agree on the next program.
  Tensor<float> y = sum(x, {0});
  CHECK(process_allgather(y).size() == 4);
}

TEST_CASE("a mesh over some processes' devices: the others run the same code, hold nothing and still help gather") {
  // Devices 0 and 1 (process 0's, or processes 0 and 1's with 1 device each), and the last two.
  for (auto ids : {std::vector<int>{0, 1}, std::vector<int>{6, 7}, std::vector<int>{7, 0}}) {
    auto mesh = make_mesh({2}, {"x"}, ids);
    INFO(to_string(mesh));
    Shape shape{4, 6};
    auto host = data(shape.num_elements(), 13);
    auto x = device_put(host, shape, NamedSharding(mesh, P("x")));
    bool holds = is_local_device(ids[0]) || is_local_device(ids[1]);
    CHECK(x.addressable_shards().empty() == !holds);
    Tensor<float> y = sum(x * 2.0f, {0});  // an all-reduce over the mesh's processes only
    Tensor<float> want = sum(device_put(host, shape, here()) * 2.0f, {0});
    check_close(process_allgather(y), want.to_host(), 1e-5f);
  }
}

TEST_CASE("shard_map's explicit collectives over processes have the bits of one process") {
  // Each device's block is (rows / devices, 24); the collectives run over the mesh's last axis, so
  // their groups lie inside a process or span several, depending on the process count.
  Shape xs{48, 24};
  auto hx = data(xs.num_elements(), 11);
  for (auto const& mesh : test::all_meshes()) {
    if (mesh.num_devices() < 2 || 48 % mesh.num_devices() != 0) continue;
    FixedVector<AxisName, max_mesh_axes> names;
    for (std::size_t a = 0; a < mesh.num_axes(); ++a) names.push_back(mesh.axes().name(a));
    PartitionSpec spec(DimSpec::of(names), None);
    DimSpec last(mesh.axes().name(mesh.num_axes() - 1));
    int n = mesh.axes().size(mesh.num_axes() - 1);
    std::vector<std::pair<int, int>> shift;
    for (int m = 0; m < n; ++m) shift.emplace_back(m, (m + 1) % n);
    auto x = device_put(hx, xs, NamedSharding(mesh, spec));
    auto run = [&](std::string const& what, auto body) {
      INFO(what << " on " << to_string(mesh));
      Tensor<float> y = shard_map(body, mesh, {spec}, spec)(x);
      record("shard_map " + what + " " + to_string(mesh), process_allgather(y));
    };
    run("psum", [&](auto const& l) { return lax::psum(l * 3.0f, last); });
    run("pmax", [&](auto const& l) { return lax::pmax(l, last); });
    run("all_gather", [&](auto const& l) { return lax::all_gather(l, last, {.axis = 1, .tiled = true}); });
    run("psum_scatter", [&](auto const& l) {
      return lax::psum_scatter(l, last, {.scatter_dimension = 1, .tiled = true});
    });
    run("all_to_all", [&](auto const& l) { return lax::all_to_all(l, last, 1, 0, true); });
    run("ppermute", [&](auto const& l) { return lax::ppermute(l, last, shift); });
    run("axis_index", [&](auto const& l) { return l + astype<float>(lax::axis_index(last)); });
  }
}

TEST_CASE("zz: every result has the bits of the single-process run") {
  char const* path = std::getenv("TESSEL_MPI_DIGESTS");
  char const* mode = std::getenv("TESSEL_MPI_DIGESTS_MODE");
  if (path == nullptr || mode == nullptr) SKIP("TESSEL_MPI_DIGESTS and TESSEL_MPI_DIGESTS_MODE are not set");
  if (std::string(mode) == "write") {
    if (distributed::process_index() == 0) {
      std::ofstream out(path);
      for (auto const& [name, h] : digests()) out << h << ' ' << name << '\n';
      REQUIRE(out.good());
    }
    return;
  }
  std::ifstream in(path);
  REQUIRE(in.good());
  std::size_t k = 0;
  std::uint64_t h;
  std::string name;
  while (in >> h && std::getline(in, name)) {
    REQUIRE(k < digests().size());
    INFO(digests()[k].first);
    CHECK(" " + digests()[k].first == name);
    CHECK(digests()[k].second == h);
    ++k;
  }
  CHECK(k == digests().size());
}

int main(int argc, char* argv[]) {
  setenv("TESSEL_COST_MODEL", "", 1);
  tessel::ScopeGuard guard;  // under mpirun: MPI first, then Kokkos
  return Catch::Session().run(argc, argv);
}
