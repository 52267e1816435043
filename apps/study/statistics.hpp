#pragma once
// The summaries a study reports over repeated measurements.
#include <algorithm>
#include <cmath>
#include <vector>

namespace tessel::study {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The sample standard deviation (n - 1 in the denominator; 0 for one value).
inline double sample_stddev(std::vector<double> const& v) {
  double mean = 0, var = 0;
  for (double x : v) mean += x / static_cast<double>(v.size());
  for (double x : v) var += (x - mean) * (x - mean) / std::max<double>(1, static_cast<double>(v.size()) - 1);
  return std::sqrt(var);
}

}  // namespace tessel::study
