// Where logical devices run (runtime/device_placement.hpp): TESSEL_GPUS's placements and its
// errors, computed for GPU counts this machine need not have; on this build, every device on its
// one unit, as explain's last line says; a refused placement changes nothing.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdlib>
#include <format>
#include <vector>

#include "support/data.hpp"
#include "tessel/runtime/backend/devices.hpp"
#include "tessel/runtime/device_placement.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::EndsWith;

namespace {
std::string gpu_name(int unit) { return std::format("GPU {}", unit); }
}  // namespace

TEST_CASE("TESSEL_GPUS places devices on GPUs in contiguous blocks", "[runtime][placement]") {
  using detail::place_devices;
  using V = std::vector<int>;
  CHECK(place_devices(8, nullptr, 0, 4, "gpu") == V(8, 0));  // unset: one GPU, Kokkos' own
  CHECK(place_devices(8, "", 3, 4, "gpu") == V(8, 3));
  CHECK(place_devices(8, "1", 0, 1, "cpu") == V(8, 0));
  CHECK(place_devices(8, "all", 0, 1, "cpu") == V(8, 0));    // a host's one unit
  CHECK(place_devices(8, "2", 0, 4, "gpu") == V{0, 0, 0, 0, 1, 1, 1, 1});
  CHECK(place_devices(8, "all", 0, 8, "gpu") == V{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(place_devices(3, "2", 0, 2, "gpu") == V{0, 0, 1});  // uneven blocks
  CHECK(place_devices(6, "4", 0, 4, "gpu") == V{0, 0, 1, 2, 2, 3});
  CHECK(place_devices(4, "all", 2, 4, "gpu") == V{2, 2, 3, 3});  // from Kokkos' GPU (2) on
  CHECK(place_devices(2, "all", 0, 8, "gpu") == V{0, 1});        // up to one GPU per device
}

TEST_CASE("a placement the machine cannot give is refused, naming the request and what there is",
          "[runtime][placement][error]") {
  using detail::place_devices;
  CHECK_THROWS_WITH(place_devices(8, "two", 0, 4, "gpu"),
                    "TESSEL_GPUS='two' is not a GPU count: give a number from 1, or 'all'");
  CHECK_THROWS_WITH(place_devices(8, "0", 0, 4, "gpu"),
                    "TESSEL_GPUS='0' is not a GPU count: give a number from 1, or 'all'");
  CHECK_THROWS_WITH(place_devices(8, "2x", 0, 4, "gpu"),
                    "TESSEL_GPUS='2x' is not a GPU count: give a number from 1, or 'all'");
  CHECK_THROWS_WITH(place_devices(8, "5", 0, 4, "gpu"),
                    "TESSEL_GPUS=5 asks for 5 GPUs from GPU 0 (Kokkos' device), but this process sees 4 GPUs (0..3): "
                    "at most 4 from there");
  CHECK_THROWS_WITH(place_devices(8, "3", 2, 4, "gpu"),
                    "TESSEL_GPUS=3 asks for 3 GPUs from GPU 2 (Kokkos' device), but this process sees 4 GPUs (0..3): "
                    "at most 2 from there");
  CHECK_THROWS_WITH(place_devices(2, "4", 0, 8, "gpu"),
                    "TESSEL_GPUS=4 asks for 4 GPUs for 2 logical devices (TESSEL_NUM_DEVICES or set_device_count): a "
                    "device runs on one GPU, so at most 2");
  // A host backend has one unit; on a GPU build, unit 0 would be a GPU.
  if (platform_name() == "cpu")
    CHECK_THROWS_WITH(place_devices(8, "2", 0, 1, "cpu"),
                      "TESSEL_GPUS=2 asks for 2 GPUs, but this build's backend runs on the host (platform 'cpu'), "
                      "whose 8 logical devices share it; build a GPU backend's preset to place devices on GPUs");
}

TEST_CASE("a placement is described by blocks of devices per unit", "[runtime][placement]") {
  using detail::describe_placement;
  std::vector<int> two{0, 0, 0, 0, 1, 1, 1, 1}, each{0, 1}, back{1, 0, 0};
  CHECK(describe_placement(two, 0, gpu_name) == "0..3 on GPU 0, 4..7 on GPU 1");
  CHECK(describe_placement(each, 4, gpu_name) == "4 on GPU 0, 5 on GPU 1");  // a second process's devices
  CHECK(describe_placement(back, 0, gpu_name) == "0 on GPU 1, 1..2 on GPU 0");
}

TEST_CASE("explain says where the devices run", "[runtime][placement]") {
  auto const where = std::format("0..7 on {}", backend::unit_name(backend::available_units().first));
  CHECK(device_placement() == where);
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  auto x = device_put(test::iota_data<float>({8, 4}), Shape{8, 4}, NamedSharding(mesh, P("a", "b")));
  CHECK_THAT(explain(x * 2.0f + 1.0f), EndsWith("devices: " + where + "\n"));
  CHECK_THAT(explain_json(x * 2.0f), ContainsSubstring("\"devices\": \"" + where + "\""));
}

TEST_CASE("devices placed where this machine has no room are refused, and tensors stay as they were",
          "[runtime][placement][error]") {
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  auto data = test::iota_data<float>({8, 4});
  auto x = device_put(data, Shape{8, 4}, NamedSharding(mesh, P("a", "b")));
  auto const offered = backend::available_units();
  std::string const too_many = std::to_string(offered.count - offered.first + 1);
  setenv("TESSEL_GPUS", too_many.c_str(), 1);
  set_device_count(8);  // the devices are made again, with the placement asked for
  CHECK_THROWS_WITH(Tensor<float>(x + 1.0f), ContainsSubstring("TESSEL_GPUS=" + too_many + " asks for " + too_many));
  unsetenv("TESSEL_GPUS");
  CHECK(x.to_host() == data);
  CHECK(Tensor<float>(x + 1.0f).to_host()[5] == data[5] + 1.0f);
  CHECK(device_placement() == std::format("0..7 on {}", backend::unit_name(offered.first)));
}
