// static_jit's run-time side: binding a compile-time plan to devices, and its messages.
#include "tessel/runtime/static_jit.hpp"

#include <format>

namespace tessel::detail {

std::string static_argument_text(char const* dtype, Shape const& shape, PartitionSpec const& spec, MeshAxes const& mesh) {
  return std::format("{} {} {} over mesh axes {}", dtype, to_string(shape), to_string(spec), to_string(mesh));
}

void throw_static_argument(std::size_t index, std::string const& have, std::string const& want) {
  throw Error(std::format("static_jit: argument {} is {}, but the function was planned for {}; device_put it to "
                          "that sharding first, or plan for this one",
                          index, have, want));
}

void throw_static_mesh(std::size_t index, Mesh const& have, Mesh const& first) {
  throw Error(std::format("static_jit: argument {} lives on {}, but the arguments before it on {}; a statically "
                          "planned function runs on one mesh",
                          index, to_string(have), to_string(first)));
}

std::string static_step_text(plan::StaticStep const& s) {
  return std::format("{} node {} on {} devices ({} bytes, est {:.3f} us)",
                     s.kind == plan::StepKind::collective ? plan::name(s.collective) : plan::name(s.kind),
                     s.node, s.devices, s.bytes, s.estimate_us);
}

void throw_static_mismatch(std::size_t step, std::string const& compiled, std::string const& bound) {
  throw Error(std::format("static_jit: internal error: instruction {} of the plan bound to these devices ({}) differs "
                          "from the compiler's ({}); please report the program",
                          step, bound, compiled));
}

void bind_shardings(std::vector<plan::NodePlan>& nodes, Mesh const& mesh) {
  auto bind = [&](std::optional<NamedSharding>& s) {
    if (s && s->mesh().is_abstract()) s = s->with_devices(mesh);
  };
  for (auto& n : nodes) {
    bind(n.out);
    bind(n.partial);
    bind(n.after_collective);
  }
}

}  // namespace tessel::detail
