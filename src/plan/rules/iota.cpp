// iota: no operands and no memory. It takes the sharding its consumer asks for (each device
// computes its block's coordinates inside the consumer's kernel); alone, it is one kernel on
// device 0, like an uncommitted array.
#include "../planner.hpp"

namespace tessel::plan {
namespace {

class IotaRules final : public OpRules {
 public:
  std::optional<NamedSharding> natural(Planner const&, int) const override { return std::nullopt; }
  void assign(Planner& p, int i, std::optional<NamedSharding> const& req) const override {
    p.plan(i).out = req ? *req : Planner::unplaced();
  }
  void region(Scheduler& s, int i, Region& r) const override { r.ops.emplace_back(s.node(i).op); }
  void materialize(Scheduler& s, int i) const override { s.fused_kernel(i, "iota"); }
};

}  // namespace

TESSEL_RULES(iota, IotaRules)

}  // namespace tessel::plan
