#pragma once
// Whole files in and out; a failure is a StudyError naming the file.
#include <filesystem>
#include <string>
#include <string_view>

namespace tessel::study {

// `what` says what the file is for in the message ("cannot read study file 'x.toml'").
std::string read_file(std::string const& path, std::string_view what);
void write_file(std::filesystem::path const& path, std::string const& text);

}  // namespace tessel::study
