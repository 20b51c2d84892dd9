#pragma once
// Helpers shared by the test executables.

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "catalog/catalog.h"
#include "common/strict_json.h"

namespace dispatchd::test {

inline std::string source_path(const std::string& relative) {
  return std::string(DISPATCHD_SOURCE_DIR) + "/" + relative;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Loads a catalog that must be valid (a test setup step, not the thing under test).
inline catalog::Catalog load_catalog(const std::string& relative) {
  auto loaded = catalog::Catalog::load_file(source_path(relative));
  if (!loaded) throw std::runtime_error("bad test catalog: " + loaded.error().front().to_string());
  return std::move(*loaded);
}

// Parses JSON the code under test produced; throws when it is not valid JSON.
inline rapidjson::Document parse_json(const std::string& text) {
  auto parsed = json::parse_strict(text, {});
  if (!parsed) throw std::runtime_error("not JSON: " + parsed.error().message);
  return std::move(parsed->document);
}

inline const catalog::Catalog& orders() {
  static const catalog::Catalog catalog = load_catalog("tests/data/catalogs/orders.json");
  return catalog;
}

inline const catalog::Catalog& support_en() {
  static const catalog::Catalog catalog = load_catalog("catalog/examples/support.en.json");
  return catalog;
}

inline const catalog::Catalog& support_es() {
  static const catalog::Catalog catalog = load_catalog("catalog/examples/support.es.json");
  return catalog;
}

}  // namespace dispatchd::test
