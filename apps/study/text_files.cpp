#include "text_files.hpp"

#include <format>
#include <fstream>
#include <sstream>

#include "study.hpp"

namespace tessel::study {

std::string read_file(std::string const& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw StudyError(std::format("cannot read {} '{}'", what, path));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(std::filesystem::path const& path, std::string const& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw StudyError(std::format("cannot write '{}'", path.string()));
}

}  // namespace tessel::study
