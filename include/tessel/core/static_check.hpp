#pragma once
// TESSEL_STATIC_CHECK(mesh, spec[, shape]): a constant mesh, spec and shape checked at compile
// time, failing with the same message a run-time check throws, e.g.
//   constexpr tessel::MeshAxes mesh({4, 2}, {"dp", "mp"});
//   TESSEL_STATIC_CHECK(mesh, tessel::P("dp", "tp"));
//   error: static assertion failed: P('dp', 'tp') names mesh axis 'tp', which is not in the mesh
//          ('dp': 4, 'mp': 2)
// The message needs static_assert with a computed message: GCC >= 14 (in C++20 mode too) or a
// compiler in C++26 mode. Elsewhere the check still fails to compile, with a fixed text.
#include "tessel/core/compile_pass.hpp"
#include "tessel/core/shard_layout.hpp"

// (nvcc and clang define __GNUC__ too, without GCC's computed messages.)
#if (defined(__cpp_static_assert) && __cpp_static_assert >= 202306L) || \
    (defined(__GNUC__) && !defined(__clang__) && !TESSEL_NVCC && __GNUC__ >= 14)
#define TESSEL_DETAIL_STATIC_ASSERT_MESSAGE(message) \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wc++26-extensions\"") \
  static_assert((message).empty(), message); _Pragma("GCC diagnostic pop")
#else
#define TESSEL_DETAIL_STATIC_ASSERT_MESSAGE(message) \
  static_assert((message).empty(), "tessel: invalid sharding (use GCC >= 14 or C++26 to see why)");
#endif

#define TESSEL_DETAIL_STATIC_CHECK_2(mesh, spec) \
  TESSEL_DETAIL_STATIC_ASSERT_MESSAGE(::tessel::ShardLayout::error((mesh), (spec)))
#define TESSEL_DETAIL_STATIC_CHECK_3(mesh, spec, shape) \
  TESSEL_DETAIL_STATIC_ASSERT_MESSAGE(::tessel::ShardLayout::error((mesh), (spec), (shape)))
#define TESSEL_DETAIL_STATIC_CHECK_PICK(_1, _2, _3, name, ...) name
#define TESSEL_STATIC_CHECK(...) \
  TESSEL_DETAIL_STATIC_CHECK_PICK(__VA_ARGS__, TESSEL_DETAIL_STATIC_CHECK_3, TESSEL_DETAIL_STATIC_CHECK_2, )(__VA_ARGS__)
