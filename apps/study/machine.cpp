#include "machine.hpp"

#include <cblas.h>

#include <fstream>
#include <string_view>

namespace tessel::study {

std::string platform_label() {
  std::string model = "unknown CPU";
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("model name")) {
      auto colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(colon + 1);
      break;
    }
  }
  // Compact: no "(R)", "(TM)", "CPU", "@ 2.10GHz", commas or runs of spaces.
  for (std::string_view junk : {"(R)", "(TM)", "(tm)", " CPU", ","}) {
    for (auto p = model.find(junk); p != std::string::npos; p = model.find(junk)) model.erase(p, junk.size());
  }
  if (auto at = model.find(" @"); at != std::string::npos) model.erase(at);
  std::string compact;
  for (char c : model)
    if (!(c == ' ' && (compact.empty() || compact.back() == ' '))) compact += c;
  while (!compact.empty() && compact.back() == ' ') compact.pop_back();
  return compact + " / " + ExecSpace::name();
}

MachineLimits::MachineLimits()
    : copy_src_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "copy_src"), 1 << 24),
      copy_dst_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "copy_dst"), 1 << 24),
      a_(gemm_n * gemm_n, 1.0f),
      b_(gemm_n * gemm_n, 0.5f),
      c_(gemm_n * gemm_n, 0.0f) {
  Kokkos::deep_copy(copy_src_, 1.0f);
  Kokkos::deep_copy(copy_dst_, 0.0f);
}

void MachineLimits::run(Bound bound) {
  if (bound == Bound::memory) {
    triad_();
  } else if (bound == Bound::compute) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, gemm_n, gemm_n, gemm_n, 1.0f, a_.data(), gemm_n, b_.data(),
                gemm_n, 0.0f, c_.data(), gemm_n);
  } else {
    Kokkos::deep_copy(copy_dst_, copy_src_);
  }
}

double MachineLimits::work(Bound bound) const {
  if (bound == Bound::memory) return triad_.bytes() / 1e9;
  if (bound == Bound::compute) return 2.0 * gemm_n * gemm_n * gemm_n / 1e9;
  return static_cast<double>(copy_src_.extent(0)) * sizeof(float) / 1e9;
}

}  // namespace tessel::study
