#pragma once
// The study file, TOML or JSON (the same tables: {"study": {...}, "configuration": [{...}],
// "workload": [{...}]}), read into a Study. Every workload, size parameter and configuration is
// checked before anything runs; `source` names the file in messages.
#include <string>
#include <string_view>

#include "study.hpp"

namespace tessel::study {

Study parse_study(std::string_view toml_text, std::string const& source);
Study parse_study_json(std::string_view json_text, std::string const& source);
// Reads JSON when the name ends in .json, TOML otherwise.
Study read_study(std::string const& path);

}  // namespace tessel::study
