#pragma once
// Every error tessel reports on bad input is a tessel::Error whose message names the culprit in
// the user's words (axis names, dimensions, sizes, shardings). It is thrown before any tensor is
// touched, so the caller's tensors are as they were.
#include <cstddef>
#include <stdexcept>
#include <string>

namespace tessel {

class Error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Device memory ran out. The message names the tensor (shape, dtype, sharding), the bytes one
// device needed and the device; nothing was changed. `bytes()` is the allocation that failed.
class OutOfMemory : public Error {
 public:
  OutOfMemory(std::string const& message, std::size_t bytes) : Error(message), bytes_(bytes) {}
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_;
};

}  // namespace tessel
