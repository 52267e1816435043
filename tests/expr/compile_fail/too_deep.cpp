// Must not compile: an expression nested deeper than max_expression_depth is a compile error that
// names the limit (and nothing else: no template-depth error follows it).
#include <utility>

#include "tessel/tessel.hpp"

#ifndef TOO_DEEP
#define TOO_DEEP 300
#endif

template <std::size_t... I>
auto chain(tessel::Tensor<float> const& x, std::index_sequence<I...>) {
  return (tessel::as_node(x) + ... + ((void)I, 1.0f));  // ((x + 1) + 1) ...: depth TOO_DEEP + 1
}

tessel::Tensor<float> too_deep(tessel::Tensor<float> const& x) {
  return chain(x, std::make_index_sequence<TOO_DEEP>{});
}
