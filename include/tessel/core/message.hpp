#pragma once
// Error messages as constexpr values. The core's checks build their messages here, so the same
// text serves a run-time tessel::Error and a compile-time static_assert (TESSEL_STATIC_CHECK in
// core/static_check.hpp): a constant spec naming an unknown axis then fails to compile with the
// axis and the mesh in the first line, in the notation to_string prints.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tessel/core/mesh_axes.hpp"
#include "tessel/core/partition_spec.hpp"
#include "tessel/core/shape.hpp"

namespace tessel {

class Message {
 public:
  static constexpr std::size_t capacity = 480;

  constexpr Message() = default;
  constexpr explicit Message(std::string_view s) { append(s); }

  // Text past the capacity is cut and marked with "...": a message is never an overflow.
  constexpr Message& append(std::string_view s) {
    for (char c : s) {
      if (size_ == capacity) {
        for (std::size_t i = capacity - 3; i < capacity; ++i) chars_[i] = '.';
        return *this;
      }
      chars_[size_++] = c;
    }
    return *this;
  }
  constexpr Message& append(std::int64_t v) {
    char digits[20]{};
    int n = 0;
    // Negative digits, so INT64_MIN needs no special case.
    std::int64_t x = v < 0 ? v : -v;
    do {
      digits[n++] = static_cast<char>('0' - x % 10);
      x /= 10;
    } while (x != 0);
    if (v < 0) append("-");
    while (n > 0) append(std::string_view(&digits[--n], 1));
    return *this;
  }
  constexpr Message& append(Shape const& shape) {
    append("(");
    for (std::size_t i = 0; i < shape.size(); ++i) (i ? append(", ") : *this).append(shape[i]);
    return append(shape.size() == 1 ? ",)" : ")");
  }
  constexpr Message& append(MeshAxes const& axes) {
    append("(");
    for (std::size_t i = 0; i < axes.num_axes(); ++i)
      (i ? append(", ") : *this).append("'").append(axes.name(i).view()).append("': ").append(std::int64_t{axes.size(i)});
    return append(")");
  }
  constexpr Message& append(DimSpec const& d) {
    if (d.replicated()) return append("None");
    if (d.axes().size() == 1) return append("'").append(d.axes()[0].view()).append("'");
    append("(");
    for (std::size_t i = 0; i < d.axes().size(); ++i) (i ? append(", ") : *this).append("'").append(d.axes()[i].view()).append("'");
    return append(")");
  }
  constexpr Message& append(PartitionSpec const& spec) {
    append("P(");
    for (std::size_t i = 0; i < spec.size(); ++i) (i ? append(", ") : *this).append(spec[i]);
    return append(")");
  }
  constexpr Message& append(char const* s) { return append(std::string_view(s)); }

  template <class T>
  constexpr Message& operator<<(T const& v) {
    if constexpr (std::is_integral_v<T>) return append(static_cast<std::int64_t>(v));
    else return append(v);
  }

  [[nodiscard]] constexpr bool empty() const { return size_ == 0; }
  [[nodiscard]] constexpr std::size_t size() const { return size_; }
  [[nodiscard]] constexpr char const* data() const { return chars_; }
  [[nodiscard]] constexpr std::string_view view() const { return {chars_, size_}; }

 private:
  char chars_[capacity]{};
  std::size_t size_ = 0;
};

}  // namespace tessel
