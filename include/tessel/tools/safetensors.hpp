#pragma once
// Weights from safetensors files, the format Hugging Face, PyTorch and JAX users already have:
// an 8-byte little-endian header length, a JSON header ({"name": {"dtype", "shape",
// "data_offsets"}, "__metadata__": {...}}), then the tensors' bytes, row-major.
//
// The file is mapped, not read: loading a tensor copies only the blocks of it that this
// process's devices hold, straight from the mapping into each shard, so a process of a
// multi-process run touches only its part of a large file. The header is checked whole when the
// file is opened (every dtype known, every byte range inside the file, of its shape's size, none
// overlapping); a corrupt or truncated file is an Error naming the tensor and the bytes, never a
// crash.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessel/runtime/tensor.hpp"

namespace tessel {

// One tensor of a safetensors file: its dtype, shape and byte range [begin, end) within the
// data section (after the header).
struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::float32;
  Shape shape;
  std::uint64_t begin = 0, end = 0;
};

struct SafetensorsHeader {
  std::vector<SafetensorsEntry> entries;  // in the order of their bytes
  std::map<std::string, std::string> metadata;
};

// Parses and checks a header (the JSON after the length) against a data section of `data_bytes`
// bytes; `label` names the file in messages.
SafetensorsHeader parse_safetensors_header(std::string_view json, std::uint64_t data_bytes, std::string_view label);

// The safetensors dtype string ("F32", "BF16", ...) of a DType.
std::string_view safetensors_dtype(DType d);

class SafetensorsFile {
 public:
  // Maps the file and checks its header.
  explicit SafetensorsFile(std::filesystem::path const& path);

  [[nodiscard]] std::span<SafetensorsEntry const> entries() const { return header_.entries; }
  [[nodiscard]] std::map<std::string, std::string> const& metadata() const { return header_.metadata; }
  [[nodiscard]] bool contains(std::string_view name) const;
  // The entry `name`; an Error naming the file's tensors when there is none.
  [[nodiscard]] SafetensorsEntry const& entry(std::string_view name) const;

  // The tensor `name` placed with `sharding`. Its dtype must be T and, when given, its shape
  // `expected` (the model's): otherwise an Error names the tensor, what the file holds and what
  // was asked for.
  template <Element T>
  Tensor<T> load(std::string_view name, NamedSharding const& sharding, std::optional<Shape> const& expected = {}) const {
    return Tensor<T>(load_impl(name, dtype_of<T>, sharding, expected));
  }
  // On the default device.
  template <Element T>
  Tensor<T> load(std::string_view name, std::optional<Shape> const& expected = {}) const {
    return Tensor<T>(load_impl(name, dtype_of<T>, detail::single_device_sharding(), expected));
  }

 private:
  struct Mapping;
  std::shared_ptr<detail::TensorImpl> load_impl(std::string_view name, DType dtype, NamedSharding const& sharding,
                                                std::optional<Shape> const& expected) const;
  std::string label_;
  std::shared_ptr<Mapping const> map_;
  std::uint64_t data_offset_ = 0;
  SafetensorsHeader header_;
};

}  // namespace tessel
