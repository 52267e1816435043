#pragma once
// Every error tessel reports on bad input is a tessel::Error whose message names the culprit in
// the user's words (axis names, dimensions, sizes, shardings). It is thrown before any tensor is
// touched, so the caller's tensors are as they were.
#include <stdexcept>

namespace tessel {

class Error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace tessel
