#pragma once
// What makes a type an expression: an opt-in tag, so a failed requirement reads as "not a tessel
// expression" instead of a page of substitution failures.
#include <concepts>
#include <type_traits>

namespace tessel {

struct expression_tag {};

template <class E>
concept Expression = std::same_as<typename std::remove_cvref_t<E>::expr_concept, expression_tag>;

template <class E>
using expr_value_t = typename std::remove_cvref_t<E>::value_type;

}  // namespace tessel
