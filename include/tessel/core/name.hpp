#pragma once
// A short name (a mesh axis name) stored inline, so that meshes and specs stay literal types.
#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace tessel {

namespace detail {
[[noreturn]] void throw_name_too_long(std::string_view name, std::size_t max_length);
}

class AxisName {
 public:
  static constexpr std::size_t max_length = 31;

  constexpr AxisName() = default;
  constexpr AxisName(char const* s) : AxisName(std::string_view(s)) {}  // NOLINT: implicit by design
  constexpr AxisName(std::string_view s) {                              // NOLINT
    if (s.size() > max_length) detail::throw_name_too_long(s, max_length);
    for (std::size_t i = 0; i < s.size(); ++i) chars_[i] = s[i];
    size_ = static_cast<unsigned char>(s.size());
  }
  AxisName(std::string const& s) : AxisName(std::string_view(s)) {}  // NOLINT

  [[nodiscard]] constexpr std::string_view view() const { return {chars_.data(), size_}; }
  [[nodiscard]] std::string str() const { return std::string(view()); }
  [[nodiscard]] constexpr bool empty() const { return size_ == 0; }

  // Compared character by character: std::string_view's comparison costs a constant-evaluating
  // compiler (static_jit's planner) far more than the loop.
  [[nodiscard]] constexpr bool equals(std::string_view s) const {
    if (s.size() != size_) return false;
    for (std::size_t i = 0; i < size_; ++i)
      if (chars_[i] != s[i]) return false;
    return true;
  }
  friend constexpr bool operator==(AxisName const& a, AxisName const& b) {
    if (a.size_ != b.size_) return false;
    for (std::size_t i = 0; i < a.size_; ++i)
      if (a.chars_[i] != b.chars_[i]) return false;
    return true;
  }

 private:
  std::array<char, max_length + 1> chars_{};
  unsigned char size_ = 0;
};

}  // namespace tessel
