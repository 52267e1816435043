#pragma once
// A vector with a capacity fixed at compile time. The core value types (shapes, mesh axes,
// partition specs) are built from it so that they are literal types: the same planner code can
// run in a constant expression (a wrong spec becomes a compile error) and at run time.
#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <type_traits>

namespace tessel {

namespace detail {
[[noreturn]] void throw_capacity_exceeded(std::size_t capacity, std::size_t wanted, char const* what);
}

// What a FixedVector holds, for the message when its capacity is exceeded ("at most 8 mesh axes").
struct Elements {
  static constexpr char const* what = "elements";
};

template <class T, std::size_t N, class What = Elements>
class FixedVector {
 public:
  using value_type = T;
  using size_type = std::size_t;
  using iterator = T*;
  using const_iterator = T const*;

  constexpr FixedVector() = default;
  constexpr FixedVector(std::initializer_list<T> init) {
    if (init.size() > N) detail::throw_capacity_exceeded(N, init.size(), What::what);
    for (T const& v : init) items_[size_++] = v;
  }
  constexpr explicit FixedVector(std::size_t count, T const& value = T{}) {
    if (count > N) detail::throw_capacity_exceeded(N, count, What::what);
    for (std::size_t i = 0; i < count; ++i) items_[size_++] = value;
  }

  // The same values under another name for what they are (a FixedVector<int, 8> of mesh sizes
  // passed where MeshSizes is expected): the tag only words the capacity message.
  template <class OtherWhat>
    requires(!std::is_same_v<OtherWhat, What>)
  constexpr FixedVector(FixedVector<T, N, OtherWhat> const& other) {  // NOLINT: implicit by design
    for (T const& v : other) items_[size_++] = v;
  }

  constexpr void push_back(T const& v) {
    if (size_ == N) detail::throw_capacity_exceeded(N, N + 1, What::what);
    items_[size_++] = v;
  }
  constexpr void pop_back() { --size_; }
  constexpr void clear() { size_ = 0; }

  [[nodiscard]] constexpr std::size_t size() const { return size_; }
  [[nodiscard]] constexpr bool empty() const { return size_ == 0; }
  static constexpr std::size_t capacity() { return N; }

  constexpr T& operator[](std::size_t i) { return items_[i]; }
  constexpr T const& operator[](std::size_t i) const { return items_[i]; }
  constexpr T& back() { return items_[size_ - 1]; }
  constexpr T const& back() const { return items_[size_ - 1]; }

  constexpr T* begin() { return items_.data(); }
  constexpr T* end() { return items_.data() + size_; }
  constexpr T const* begin() const { return items_.data(); }
  constexpr T const* end() const { return items_.data() + size_; }
  constexpr T* data() { return items_.data(); }
  constexpr T const* data() const { return items_.data(); }

  friend constexpr bool operator==(FixedVector const& a, FixedVector const& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  std::array<T, N> items_{};
  std::size_t size_ = 0;
};

}  // namespace tessel
