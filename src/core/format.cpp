// Printing of the core value types, in the notation JAX users read every day.
#include <format>
#include <string>

#include "tessel/core/box.hpp"
#include "tessel/core/mesh.hpp"
#include "tessel/core/message.hpp"
#include "tessel/core/named_sharding.hpp"
#include "tessel/core/partition_spec.hpp"
#include "tessel/core/shape.hpp"

namespace tessel {

// Shapes, mesh axes and specs print through Message, the constexpr form the core's error messages
// use, so run-time and compile-time text agree.
std::string to_string(Shape const& shape) { return std::string(Message().append(shape).view()); }
std::string to_string(MeshAxes const& axes) { return std::string(Message().append(axes).view()); }
std::string varying_text(MeshAxes const& axes, std::uint32_t mask) {
  std::string s;
  for (std::size_t a = 0; a < axes.num_axes(); ++a)
    if (mask & (1u << a)) s += std::format("{}'{}'", s.empty() ? "" : ", ", axes.name(a).view());
  return s;
}

std::string to_string(PartitionSpec const& spec) { return std::string(Message().append(spec).view()); }

std::string to_string(Box const& box) {
  std::string s = "[";
  for (std::size_t i = 0; i < box.size(); ++i) s += std::format("{}{}:{}", i ? ", " : "", box[i].start, box[i].stop);
  return s + "]";
}

std::string to_string(Mesh const& mesh) {
  std::string s = "Mesh(" + to_string(mesh.axes()).substr(1);
  s.pop_back();
  s += "; devices [";
  for (int i = 0; i < mesh.num_devices(); ++i) s += std::format("{}{}", i ? " " : "", mesh.device_id(i));
  return s + "])";
}

std::string to_string(NamedSharding const& sharding) {
  return std::format("NamedSharding(mesh={}, spec={})", to_string(sharding.mesh().axes()), to_string(sharding.spec()));
}

std::vector<std::pair<int, Box>> NamedSharding::devices_indices_map(Shape const& global) const {
  check_shape(global);
  std::vector<std::pair<int, Box>> map;
  for (int flat = 0; flat < mesh_.num_devices(); ++flat) map.emplace_back(mesh_.device_id(flat), layout_.box(global, flat));
  return map;
}

}  // namespace tessel
