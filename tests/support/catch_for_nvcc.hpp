#pragma once
// Under nvcc, Catch2 brackets every test case and assertion with `nv_diagnostic push` / `pop` and
// `nv_diag_suppress` pragmas, and nvcc 13's front end (cudafe++) slows to a crawl on a file with
// a few hundred of them: tests/expr/test_math.cpp ran for more than 30 minutes in cudafe++ alone,
// and 2.6 s with those pragma lines removed. Here they expand to nothing (the cost: warnings about
// variables Catch2 declares and never reads). The test precompiled header includes this after
// Catch2 under nvcc (tests/CMakeLists.txt), so every test source gets it before its own code.
#include <catch2/internal/catch_compiler_capabilities.hpp>

#if defined(__CUDACC__) && !defined(__clang__)
#undef CATCH_INTERNAL_START_WARNINGS_SUPPRESSION
#undef CATCH_INTERNAL_STOP_WARNINGS_SUPPRESSION
#undef CATCH_INTERNAL_SUPPRESS_UNUSED_VARIABLE_WARNINGS
#define CATCH_INTERNAL_START_WARNINGS_SUPPRESSION
#define CATCH_INTERNAL_STOP_WARNINGS_SUPPRESSION
#define CATCH_INTERNAL_SUPPRESS_UNUSED_VARIABLE_WARNINGS
#endif
