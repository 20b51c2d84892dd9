#pragma once
#ifndef DISPATCHD_INTERNAL_CATALOG
#error "catalog/internal/ is private to catalog/: include the module's public headers instead"
#endif
// Internal: turns a catalog file's JSON into a Catalog, collecting every problem.

#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "catalog/catalog.h"

namespace dispatchd::catalog {

class CatalogReader {
 public:
  explicit CatalogReader(std::string origin) : m_origin(std::move(origin)) {}
  [[nodiscard]] std::expected<Catalog, std::vector<Problem>> read(std::string_view text);

 private:
  using Value = rapidjson::Value;
  void read_root(const Value& root);
  void read_field(const std::string& name, const Value& value, const std::string& at);
  void read_action(const Value& value, const std::string& at);
  void read_policy(Action& action, const Value& value, const std::string& at);
  void read_http(Action& action, const Value& value, const std::string& at);
  void read_mcp(Action& action, const Value& value, const std::string& at);
  void read_template(Action& action, const Value& value, const std::string& at);  // reader_template.cpp
  void read_template_part(TemplateMessage& out, TemplatePart part, int button, const Value& value,
                          const std::string& at);
  void check_template(const Action& action, const std::string& at);
  void read_example(Action& action, const Value& value, const std::string& at);
  void read_field_names(std::vector<std::string>& out, const Value& value, const std::string& at);
  void check_action(const Action& action, const std::string& at);
  void check_interactive(const Action& action, const std::string& at);
  void check_keys(const Value& object, const std::string& at, std::initializer_list<std::string_view> allowed);
  bool check_literal(const Field& field, const Value& value, const std::string& at);
  void problem(const std::string& at, std::string message);

  std::string m_origin;
  Catalog m_catalog;
  std::vector<Problem> m_problems;
};

}  // namespace dispatchd::catalog
