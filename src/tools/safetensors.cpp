#include "tessel/tools/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <format>
#include <limits>
#include <memory>
#include <utility>

#include <nlohmann/json.hpp>

#include "tessel/core/error.hpp"
#include "tessel/runtime/tensor_impl.hpp"

namespace tessel {

namespace {

using json = nlohmann::json;

struct KnownDType {
  std::string_view code;
  DType dtype;
};
constexpr std::array<KnownDType, 9> known_dtypes{{{"F64", DType::float64},
                                                  {"F32", DType::float32},
                                                  {"BF16", DType::bfloat16},
                                                  {"F16", DType::float16},
                                                  {"I64", DType::int64},
                                                  {"I32", DType::int32},
                                                  {"I8", DType::int8},
                                                  {"U8", DType::uint8},
                                                  {"BOOL", DType::bool_}}};

[[noreturn]] void fail(std::string_view label, std::string const& what) {
  throw Error(std::format("safetensors: {}: {}", label, what));
}

std::string shape_text(std::vector<std::uint64_t> const& dims) {
  std::string s = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) s += std::format("{}{}", i ? ", " : "", dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

SafetensorsEntry parse_entry(std::string const& name, json const& e, std::uint64_t data_bytes, std::string_view label) {
  auto bad = [&](std::string const& what) { fail(label, std::format("tensor '{}': {}", name, what)); };
  if (!e.is_object()) bad(std::format("its entry is {}, not an object", e.type_name()));
  for (char const* key : {"dtype", "shape", "data_offsets"})
    if (!e.contains(key)) bad(std::format("its entry has no \"{}\"", key));
  SafetensorsEntry out;
  out.name = name;
  json const& dt = e["dtype"];
  if (!dt.is_string()) bad(std::format("\"dtype\" is {}, not a string", dt.type_name()));
  auto const code = dt.get<std::string>();
  auto const* known =
      std::find_if(known_dtypes.begin(), known_dtypes.end(), [&](KnownDType const& k) { return k.code == code; });
  if (known == known_dtypes.end())
    bad(std::format("dtype '{}' is not one tessel stores (F64, F32, BF16, F16, I64, I32, I8, U8, BOOL)", code));
  out.dtype = known->dtype;

  json const& sh = e["shape"];
  if (!sh.is_array()) bad(std::format("\"shape\" is {}, not an array", sh.type_name()));
  if (sh.size() > max_rank) bad(std::format("shape has {} dimensions; tessel's tensors have at most {}", sh.size(), max_rank));
  std::vector<std::uint64_t> dims;
  for (json const& d : sh) {
    if (!d.is_number_unsigned()) bad(std::format("a dimension of \"shape\" is {}, not a non-negative integer", d.dump()));
    dims.push_back(d.get<std::uint64_t>());
  }
  // The byte count, checked for overflow (a hostile header can claim any shape).
  std::uint64_t bytes = size_of(out.dtype);
  constexpr std::uint64_t limit = std::uint64_t{1} << 60;
  for (std::uint64_t d : dims) {
    if (d != 0 && bytes > limit / d) bad(std::format("shape {} has more than 2^60 bytes", shape_text(dims)));
    bytes *= d;
  }
  for (std::uint64_t d : dims) out.shape.push_back(static_cast<std::int64_t>(d));

  json const& off = e["data_offsets"];
  if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
    bad(std::format("\"data_offsets\" is {}, not [begin, end]", off.dump()));
  out.begin = off[0].get<std::uint64_t>();
  out.end = off[1].get<std::uint64_t>();
  if (out.begin > out.end) bad(std::format("data_offsets [{}, {}) begin after they end", out.begin, out.end));
  if (out.end > data_bytes)
    bad(std::format("bytes [{}, {}) run past the end of the data ({} bytes: the file is truncated?)", out.begin, out.end,
                    data_bytes));
  if (out.end - out.begin != bytes)
    bad(std::format("{} {} needs {} bytes, but data_offsets [{}, {}) hold {}", tessel::name(out.dtype), shape_text(dims),
                    bytes, out.begin, out.end, out.end - out.begin));
  return out;
}

}  // namespace

std::string_view safetensors_dtype(DType d) {
  for (auto const& k : known_dtypes)
    if (k.dtype == d) return k.code;
  return "?";
}

SafetensorsHeader parse_safetensors_header(std::string_view text, std::uint64_t data_bytes, std::string_view label) {
  json root;
  try {
    root = json::parse(text.begin(), text.end());
  } catch (json::parse_error const& e) {
    fail(label, std::format("the header is not JSON (byte {} of {}): {}", e.byte, text.size(), e.what()));
  } catch (json::exception const& e) {  // a number out of range, say (found by fuzz_safetensors)
    fail(label, std::format("the header is not JSON: {}", e.what()));
  }
  if (!root.is_object()) fail(label, std::format("the header is {}, not a JSON object", root.type_name()));
  SafetensorsHeader h;
  for (auto const& [key, value] : root.items()) {
    if (key == "__metadata__") {
      if (!value.is_object()) fail(label, std::format("__metadata__ is {}, not an object", value.type_name()));
      for (auto const& [k, v] : value.items()) {
        if (!v.is_string()) fail(label, std::format("__metadata__ '{}' is {}, not a string", k, v.type_name()));
        h.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    h.entries.push_back(parse_entry(key, value, data_bytes, label));
  }
  std::sort(h.entries.begin(), h.entries.end(), [](SafetensorsEntry const& a, SafetensorsEntry const& b) {
    return std::pair{a.begin, a.end} < std::pair{b.begin, b.end};
  });
  for (std::size_t i = 1; i < h.entries.size(); ++i) {
    auto const &a = h.entries[i - 1], &b = h.entries[i];
    if (b.begin < a.end)
      fail(label, std::format("tensors '{}' [{}, {}) and '{}' [{}, {}) overlap", a.name, a.begin, a.end, b.name, b.begin,
                              b.end));
  }
  return h;
}

// The file, mapped read-only for the lifetime of every SafetensorsFile copy.
struct SafetensorsFile::Mapping {
  void const* data = nullptr;
  std::size_t size = 0;
  Mapping(void const* d, std::size_t s) : data(d), size(s) {}
  Mapping(Mapping const&) = delete;
  Mapping& operator=(Mapping const&) = delete;
  ~Mapping() {
    if (data) munmap(const_cast<void*>(data), size);
  }
  [[nodiscard]] std::byte const* bytes() const { return static_cast<std::byte const*>(data); }
};

SafetensorsFile::SafetensorsFile(std::filesystem::path const& path) : label_(path.string()) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(label_, std::format("cannot open: {}", std::strerror(errno)));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    fail(label_, std::format("cannot stat: {}", std::strerror(e)));
  }
  auto const size = static_cast<std::uint64_t>(st.st_size);
  if (size < 8) {
    ::close(fd);
    fail(label_, std::format("the file has {} bytes, fewer than the 8 of its header length", size));
  }
  void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int const map_errno = errno;
  ::close(fd);  // the mapping keeps the file
  if (p == MAP_FAILED) fail(label_, std::format("cannot map {} bytes: {}", size, std::strerror(map_errno)));
  map_ = std::make_shared<Mapping const>(p, static_cast<std::size_t>(size));
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<std::uint64_t>(map_->bytes()[i]);  // little-endian
  if (n > size - 8)
    fail(label_, std::format("the header length is {} bytes, but only {} bytes follow it (truncated?)", n, size - 8));
  data_offset_ = 8 + n;
  header_ = parse_safetensors_header(std::string_view(reinterpret_cast<char const*>(map_->bytes()) + 8, n),
                                     size - data_offset_, label_);
}

bool SafetensorsFile::contains(std::string_view name) const {
  return std::any_of(header_.entries.begin(), header_.entries.end(),
                     [&](SafetensorsEntry const& e) { return e.name == name; });
}

SafetensorsEntry const& SafetensorsFile::entry(std::string_view name) const {
  for (auto const& e : header_.entries)
    if (e.name == name) return e;
  std::string some;
  for (std::size_t i = 0; i < header_.entries.size() && i < 8; ++i)
    some += std::format("{}'{}'", i ? ", " : "", header_.entries[i].name);
  if (header_.entries.size() > 8) some += ", ...";
  fail(label_, std::format("no tensor '{}' (the file has {}: {})", name, header_.entries.size(), some));
}

std::shared_ptr<detail::TensorImpl> SafetensorsFile::load_impl(std::string_view name, DType dtype,
                                                               NamedSharding const& sharding,
                                                               std::optional<Shape> const& expected) const {
  SafetensorsEntry const& e = entry(name);
  if (e.dtype != dtype)
    fail(label_, std::format("tensor '{}' is {} ({}), but {} was asked for", e.name, tessel::name(e.dtype),
                             safetensors_dtype(e.dtype), tessel::name(dtype)));
  if (expected && *expected != e.shape)
    fail(label_, std::format("tensor '{}' has shape {}, but the model expects {}", e.name, to_string(e.shape),
                             to_string(*expected)));
  std::byte const* data = map_->bytes() + data_offset_ + e.begin;
  auto const count = static_cast<std::size_t>(e.shape.num_elements());
  // A writer may leave a tensor unaligned for its type: such bytes are copied to aligned memory
  // first (new's default alignment suits every dtype). (Bytes, not std::vector<std::max_align_t>:
  // nvcc 13's front end crashes destroying glibc's unnamed max_align_t struct.)
  std::unique_ptr<std::byte[]> aligned;
  if (reinterpret_cast<std::uintptr_t>(data) % size_of(dtype) != 0) {
    aligned = std::make_unique_for_overwrite<std::byte[]>(e.end - e.begin);
    std::memcpy(aligned.get(), data, e.end - e.begin);
    data = aligned.get();
  }
  return detail::place(detail::HostBytes{data, count, dtype}, e.shape, dtype, sharding);
}

}  // namespace tessel
