#pragma once
// Expression nodes are plain data: children held by value (tensors are shared handles, so this
// copies no data and cannot dangle), an op tag, and the shape checked when the node is built.
// Nothing here allocates or launches; the planner decides shardings, collectives and fusion.
#include <bit>
#include <concepts>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "tessel/core/dtype.hpp"
#include "tessel/core/message.hpp"
#include "tessel/core/named_sharding.hpp"
#include "tessel/core/shape.hpp"
#include "tessel/expr/concept.hpp"
#include "tessel/expr/op_list.hpp"
#include "tessel/expr/promote.hpp"

namespace tessel {

// The runtime's sharded tensor (runtime/tensor.hpp), named here without including it: the
// expression layer sits below the runtime, and a tensor leaf is only made where a Tensor exists.
template <Element T>
class Tensor;

// NodeKind: expr/op_list.hpp.

// Every node type records its subtree's node count and depth (the longest path from it to a leaf,
// in nodes) in a member alias, `subtree`. A member alias's arguments are worked out when the class
// is instantiated, and an expression's types are instantiated bottom-up as it is built, so each
// figure costs one step from its children's and no pass recurses through a deep type to find it.
namespace detail {
template <int Nodes, int Depth>
struct Subtree {
  static constexpr int nodes = Nodes, depth = Depth;
};
using Leaf = Subtree<1, 1>;
template <class... Children>
inline constexpr int max_depth = [] {
  int d = 0;
  ((d = Children::subtree::depth > d ? Children::subtree::depth : d), ...);
  return d;
}();
template <class... Children>
using subtree_of = Subtree<(1 + ... + Children::subtree::nodes), 1 + max_depth<Children...>>;
}  // namespace detail

namespace detail {
// Where failed checks go while static_jit builds a function's expression in a constant expression
// (plan/static_plan.hpp): the first one's message, for the static_assert that prints it. A throw
// there would stop the compiler with an error that cannot say which check failed or why.
inline constexpr int max_static_args = 32;
struct StaticErrors {
  Message first;
  bool failed = false;
  char args[max_static_args]{};  // argument k's identity is &args[k] (GraphNode::alias)
};
[[noreturn]] void throw_message(Message const& message);  // a tessel::Error (src/expr/checks.cpp)
// A failed check: kept when static_jit is building (errors), thrown otherwise.
constexpr void check_failed(Message const& message, StaticErrors* errors) {
  if (errors == nullptr) throw_message(message);
  if (!errors->failed) {
    errors->first = message;
    errors->failed = true;
  }
}
}  // namespace detail

// One node shape: every expression node is Node<Tag, Children...>, its op's tag, the op's data
// (attributes and the result's shape, checked when the node is built) and its children, held by
// value in a tuple. Passes over expressions walk `children` generically and ask the tag for the
// rest; the facts of an op live with its tag:
//   kind                 the node family (NodeKind), for the passes that treat families alike
//   Data                 the op's attributes, with the result's shape
//   value_type<Ch...>    the result's element type given the children
//   shape(data)          the result's shape
//   name(data)           the op's name in explain and in the plan's graph
//   describe(data, n, leaves)  what the planner's graph records (plan/graph.hpp)
//   sign(data, shape, sink)    what the plan cache keys on besides structure (plan/cache.hpp)
// A tag that lacks one is a compile error naming the tag (OpTag below), never a silent default.
template <class Tag>
concept OpTag = requires(typename Tag::Data const& d) {
  { Tag::kind } -> std::convertible_to<NodeKind>;
  { Tag::shape(d) } -> std::convertible_to<Shape const&>;
  { Tag::name(d) } -> std::convertible_to<char const*>;
};

template <class Tag, class... Children>
struct Node {
  static_assert(OpTag<Tag>, "tessel: an op tag needs kind, Data, shape(data) and name(data) (expr/node.hpp)");
  using expr_concept = expression_tag;
  using tag = Tag;
  using value_type = typename Tag::template value_type<Children...>;
  static constexpr NodeKind kind = Tag::kind;
  using subtree = std::conditional_t<sizeof...(Children) == 0, detail::Leaf, detail::subtree_of<Children...>>;
  // Built by static_jit from its constant arguments (StaticArgTag leaves), in a constant expression.
  static constexpr bool traced = requires { Tag::static_argument; } || (Children::traced || ...);
  [[no_unique_address]] std::tuple<Children...> children;
  typename Tag::Data data;
  [[nodiscard]] constexpr Shape const& shape() const { return Tag::shape(data); }
};

// A tensor leaf.
template <Element T>
struct TensorTag {
  static constexpr NodeKind kind = NodeKind::tensor;
  struct Data {
    Tensor<T> tensor;
  };
  template <class...>
  using value_type = T;
  static Shape const& shape(Data const& d) { return d.tensor.shape(); }
  static constexpr char const* name(Data const&) { return "tensor"; }
  static NamedSharding const& sharding(Data const& d) { return d.tensor.sharding(); }
  static void describe(Data const& d, auto& node, auto& leaves) {
    node.sharding = d.tensor.sharding();
    node.alias = leaves.alias(d.tensor.impl_ptr().get());
    node.varying = d.tensor.impl().varying;
  }
  static void sign(Data const& d, Shape const& shape, auto& sink) {
    for (auto n : shape) sink.word(static_cast<std::uint64_t>(n));
    sink.sharding(d.tensor.sharding(), shape);
    sink.word(d.tensor.impl().varying);
    sink.leaf(d.tensor.impl_ptr().get());
  }
};
template <Element T>
using TensorNode = Node<TensorTag<T>>;

// An argument of a statically planned function (static_jit, plan/static_plan.hpp): a tensor leaf
// whose dtype, shape and sharding are constants (its mesh abstract) and whose data arrives only
// when the plan runs. Such leaves exist only while the compiler plans; the graph they describe is
// the one the same function's run-time expression describes.
template <Element T>
struct StaticArgTag {
  static constexpr NodeKind kind = NodeKind::tensor;
  static constexpr bool static_argument = true;
  struct Data {
    Shape shape;
    NamedSharding sharding;
    detail::StaticErrors* errors;
    int index;
  };
  template <class...>
  using value_type = T;
  static constexpr Shape const& shape(Data const& d) { return d.shape; }
  static constexpr char const* name(Data const&) { return "tensor"; }
  static constexpr NamedSharding const& sharding(Data const& d) { return d.sharding; }
  static constexpr void describe(Data const& d, auto& node, auto& leaves) {
    node.sharding = d.sharding;
    node.alias = leaves.alias(static_cast<void const*>(&d.errors->args[d.index]));
  }
};
template <Element T>
using StaticArgNode = Node<StaticArgTag<T>>;

namespace detail {
// A tensor leaf's sharding (a run-time tensor's, or a static argument's constant one).
template <class Data>
constexpr NamedSharding const& leaf_sharding(Data const& d) {
  if constexpr (requires { d.tensor; }) return d.tensor.sharding();
  else return d.sharding;
}
// Where an expression's failed checks go: its static arguments' StaticErrors, or none (throw).
template <class E>
constexpr StaticErrors* errors_of(E const& e) {
  if constexpr (!E::traced) {
    return nullptr;
  } else if constexpr (requires { e.data.errors; }) {
    return e.data.errors;
  } else {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      StaticErrors* found = nullptr;
      ((found = found ? found : errors_of(std::get<I>(e.children))), ...);
      return found;
    }(std::make_index_sequence<std::tuple_size_v<decltype(e.children)>>{});
  }
}
template <class... E>
constexpr StaticErrors* errors_of(E const&... e) {
  StaticErrors* found = nullptr;
  ((found = found ? found : errors_of(e)), ...);
  return found;
}
}  // namespace detail

// A C++ scalar: weakly typed (W is int or double), broadcast to any shape. Its value is not part
// of the plan (a cached plan runs any value); which scalars are equal is (plan/graph.hpp,
// LeafIdentities), so that equal scalars make equal values for common-subexpression sharing.
template <class W>
struct ScalarTag {
  static constexpr NodeKind kind = NodeKind::scalar;
  struct Data {
    W value;
  };
  template <class...>
  using value_type = Weak<W>;
  static constexpr Shape const& shape(Data const&) { return scalar_shape; }
  static constexpr char const* name(Data const&) { return "scalar"; }
  static constexpr std::uint64_t bits(Data const& d) { return std::bit_cast<std::uint64_t>(static_cast<double>(d.value)); }
  static constexpr void describe(Data const& d, auto& node, auto& leaves) { node.alias = leaves.scalar(bits(d), std::integral<W>); }
  static constexpr Shape scalar_shape{};
  static void sign(Data const& d, Shape const&, auto& sink) { sink.scalar(bits(d), std::integral<W>); }
};
template <class W>
using ScalarNode = Node<ScalarTag<W>>;

// An elementwise op over broadcast children; Compute is the promoted type children are converted
// to, Result what the op yields (bool for comparisons).
template <class Op, class Compute, class Result>
struct Elementwise {
  static constexpr NodeKind kind = NodeKind::elementwise;
  using op = Op;
  using compute_type = Compute;
  struct Data {
    Shape shape;
  };
  template <class... Children>
  using value_type = Result;
  static constexpr Shape const& shape(Data const& d) { return d.shape; }
  static constexpr char const* name(Data const&) { return Op::name; }
  static constexpr void describe(Data const&, auto&, auto&) {}
  static void sign(Data const&, Shape const&, auto&) {}
};
template <class Op, class Compute, class Result, class... Children>
using ElementwiseNode = Node<Elementwise<Op, Compute, Result>, Children...>;

// A reduction over `axes` (sorted, distinct) of its child.
template <class Op>
struct Reduce {
  static constexpr NodeKind kind = NodeKind::reduce;
  using op = Op;
  struct Data {
    FixedVector<std::uint8_t, max_rank> axes;
    bool keepdims;
    Shape shape;
  };
  template <class Child>
  using value_type = expr_value_t<Child>;
  static constexpr Shape const& shape(Data const& d) { return d.shape; }
  static constexpr char const* name(Data const&) { return Op::name; }
  static constexpr void describe(Data const& d, auto& node, auto&) {
    node.axes = d.axes;
    node.keepdims = d.keepdims;
    node.combine = Op::combiner;
    node.divides = Op::divides;
  }
  static void sign(Data const& d, Shape const&, auto& sink) {
    sink.word(d.keepdims);
    for (auto a : d.axes) sink.word(a);
    sink.word(0xffff);
  }
};
template <class Op, class Child>
using ReduceNode = Node<Reduce<Op>, Child>;

// with_sharding_constraint: the child's value must have this sharding.
struct Constraint {
  static constexpr NodeKind kind = NodeKind::constraint;
  struct Data {
    NamedSharding sharding;
    Shape shape;
  };
  template <class Child>
  using value_type = expr_value_t<Child>;
  static constexpr Shape const& shape(Data const& d) { return d.shape; }
  static constexpr char const* name(Data const&) { return "constraint"; }
  static constexpr void describe(Data const& d, auto& node, auto&) { node.sharding = d.sharding; }
  static void sign(Data const& d, Shape const& shape, auto& sink) { sink.sharding(d.sharding, shape); }
};
template <class Child>
using ConstraintNode = Node<Constraint, Child>;

template <class T>
inline constexpr bool is_tensor_v = false;
template <class T>
inline constexpr bool is_tensor_v<Tensor<T>> = true;

// Anything an op accepts: an expression, a tensor, or a C++ arithmetic scalar.
template <class X>
concept Operand = Expression<X> || is_tensor_v<std::remove_cvref_t<X>> ||
                  (std::is_arithmetic_v<std::remove_cvref_t<X>> && !std::same_as<std::remove_cvref_t<X>, bool>);

namespace detail {
[[noreturn]] void throw_scalar_out_of_range(long double value);
}

template <Operand X>
constexpr auto as_node(X const& x) {
  using D = std::remove_cvref_t<X>;
  if constexpr (Expression<D>) return x;
  else if constexpr (is_tensor_v<D>) return TensorNode<typename D::value_type>{{}, {x}};
  else if constexpr (std::is_floating_point_v<D>) return ScalarNode<double>{{}, {static_cast<double>(x)}};
  else {
    // A weak integer is an int32 in the computation, as a Python int is in JAX (which refuses
    // one that does not fit with an OverflowError); never a silent wrap.
    if (!std::in_range<int>(x)) detail::throw_scalar_out_of_range(static_cast<long double>(x));
    return ScalarNode<int>{{}, {static_cast<int>(x)}};
  }
}

template <class X>
using node_t = decltype(as_node(std::declval<X const&>()));

// Nodes in a subtree: fixes each node's post-order number from its type alone, so the planner's
// per-node decisions are found again by position without any look-up.
template <class E>
struct node_count : std::integral_constant<int, E::subtree::nodes> {};

// Nesting depth of an expression: a leaf is 1, a node one more than its deepest operand.
template <class E>
struct expression_depth : std::integral_constant<int, E::subtree::depth> {};

// The deepest expression tessel evaluates. Passes over an expression type (plan-cache signature,
// graph building, the executor, the fused kernel's evaluator) recurse through it, and compilers
// bound template recursion (-ftemplate-depth: 900 in GCC, 1024 in Clang, by default). Each level of
// nesting costs those passes one level of instantiation (elementwise ops and row-fused
// reductions), two (constraints, views, reductions computed apart) or three (concatenate), so 256
// levels of any mix stay under GCC's default (a chain of 255 concatenates needs 772). A deeper
// expression is a compile error naming this limit (check_depth below) instead of a template-depth
// error: evaluate part of it first (eval(), or a jit boundary), which also bounds compile time.
inline constexpr int max_expression_depth = 256;  // check_depth's message repeats the figure

namespace detail {
// Instantiated by every entry point that evaluates or plans an expression; the error names the
// expression's depth (Depth) and the limit.
template <int Depth, int Limit = max_expression_depth>
struct check_depth {
  static_assert(Depth <= Limit,
                "tessel: an expression may be at most max_expression_depth = 256 levels deep (its depth is "
                "the first argument of check_depth<depth, limit>); split it with eval() or a jit boundary");
  static constexpr bool ok = Depth <= Limit;
};
template <class E>
inline constexpr bool depth_ok = check_depth<E::subtree::depth>::ok;

// Passes over deep expressions reach a node's children with TESSEL_FOR_EACH_CHILD below: an
// `if constexpr` ladder on the arity (no helper template or generic lambda between a node and its
// children), so each level of nesting costs one level of template instantiation; concatenate's
// many children are a fold.
template <class E>
inline constexpr std::size_t arity = std::tuple_size_v<decltype(E::children)>;
template <std::size_t K, class E>
using child_t = std::tuple_element_t<K, decltype(E::children)>;
// Post-order offset of child K's subtree within its parent's.
template <class E, std::size_t K>
inline constexpr int child_offset = [] {
  if constexpr (K == 0) return 0;
  else return child_offset<E, K - 1> + child_t<K - 1, E>::subtree::nodes;
}();
}  // namespace detail

// Evaluates STEP(K) for each child K of the node type E, in order. STEP is a function-like macro
// the caller defines around its own expression of K (child_t<K, E>, child_offset<E, K>,
// std::get<K>(e.children)). A macro rather than a function: expressions nest up to
// max_expression_depth = 256 levels, and a helper template or a generic lambda between a node and
// its children would multiply the instantiation levels each costs; the ladder adds none. More than
// three children (concatenate's) are a fold.
#define TESSEL_FOR_EACH_CHILD(E, STEP)                                                                       \
  if constexpr (::tessel::detail::arity<E> <= 3) {                                                         \
    if constexpr (::tessel::detail::arity<E> > 0) STEP(0);                                                 \
    if constexpr (::tessel::detail::arity<E> > 1) STEP(1);                                                 \
    if constexpr (::tessel::detail::arity<E> > 2) STEP(2);                                                 \
  } else {                                                                                                 \
    [&]<std::size_t... tessel_k>(std::index_sequence<tessel_k...>) {                                       \
      (STEP(tessel_k), ...);                                                                               \
    }(std::make_index_sequence<::tessel::detail::arity<E>>{});                                             \
  }

}  // namespace tessel
