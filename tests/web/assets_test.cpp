// The staff page as dispatchd serves it: the embedded files are the files in web/staff/,
// byte for byte, with their media types; nothing else is served; the page loads only its
// own scripts and styles (the CSP allows nothing inline) and never builds HTML from strings.
#include <catch2/catch.hpp>

#include <regex>
#include <set>
#include <string>

#include "tests/test_util.h"
#include "web/assets.h"

using dispatchd::test::read_file;
using dispatchd::test::source_path;
using dispatchd::web::staff_asset;

namespace {

std::string body_of(const std::string& path) {
  const auto asset = staff_asset(path);
  REQUIRE(asset.has_value());
  return std::string(asset->body);
}

// Every match of group 1 of `pattern` in `text`.
std::set<std::string> captures(const std::string& text, const std::regex& pattern) {
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), pattern); it != std::sregex_iterator(); ++it) {
    out.insert((*it)[1].str());
  }
  return out;
}

}  // namespace

TEST_CASE("the page's files are served with their types, byte for byte", "[web]") {
  struct Row {
    const char* path;
    const char* file;
    const char* type;
  };
  const Row rows[] = {
      {"/staff/", "index.html", "text/html; charset=utf-8"},
      {"/staff/index.html", "index.html", "text/html; charset=utf-8"},
      {"/staff/app.js", "app.js", "text/javascript; charset=utf-8"},
      {"/staff/style.css", "style.css", "text/css; charset=utf-8"},
  };
  for (const Row& row : rows) {
    INFO(row.path);
    const auto asset = staff_asset(row.path);
    REQUIRE(asset.has_value());
    CHECK(asset->content_type == row.type);
    CHECK(asset->body == read_file(source_path(std::string("web/staff/") + row.file)));
  }
}

TEST_CASE("only the page's own files are served", "[web]") {
  for (const char* path : {"/staff", "", "/", "/staff/nope.js", "/staff/../CMakeLists.txt", "/staff/..%2fassets.cpp",
                           "/staff//app.js", "/staff/app.js?v=1", "/staff/APP.JS", "/api/staff/app.js",
                           "/staff/./app.js", "staff/app.js", "/staff/embed.cmake"}) {
    INFO(path);
    CHECK_FALSE(staff_asset(path).has_value());
  }
}

TEST_CASE("index.html loads only its own scripts and styles, nothing inline", "[web]") {
  const std::string html = body_of("/staff/");
  const std::regex script_tag(R"(<script\b([^>]*)>([\s\S]*?)</script>)", std::regex::icase);
  int scripts = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), script_tag); it != std::sregex_iterator(); ++it) {
    ++scripts;
    const std::string attributes = (*it)[1].str();
    INFO(attributes);
    CHECK((*it)[2].str().find_first_not_of(" \t\r\n") == std::string::npos);  // no inline body
    std::smatch src;
    REQUIRE(std::regex_search(attributes, src, std::regex(R"re(\bsrc="([^"]+)")re")));
    CHECK(std::regex_match(src[1].str(), std::regex(R"([a-z0-9_-]+\.js)")));  // same folder: 'self'
    CHECK(staff_asset("/staff/" + src[1].str()).has_value());
  }
  CHECK(scripts == 1);
  const auto styles = captures(html, std::regex(R"re(<link rel="stylesheet" href="([^"]+)")re"));
  CHECK(styles == std::set<std::string>{"style.css"});
  CHECK(staff_asset("/staff/style.css").has_value());
  // No inline style or handler: the CSP would block them, and they are how injected markup runs.
  CHECK_FALSE(std::regex_search(html, std::regex(R"(<style\b|\sstyle=|\son[a-z]+=|javascript:)", std::regex::icase)));
  // No absolute URL at all: the page works on a server without internet.
  CHECK_FALSE(std::regex_search(html, std::regex(R"((src|href)="(https?:)?//)", std::regex::icase)));
}

TEST_CASE("every module the page imports is embedded, and none builds HTML from strings", "[web]") {
  std::set<std::string> seen;
  std::set<std::string> pending{"app.js"};
  const std::regex import_from(R"(from '\./([a-z0-9_-]+\.js)')");
  const std::regex html_sink(R"(innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function)");
  while (!pending.empty()) {
    const std::string name = *pending.begin();
    pending.erase(pending.begin());
    if (!seen.insert(name).second) continue;
    INFO(name);
    const std::string js = body_of("/staff/" + name);
    CHECK_FALSE(std::regex_search(js, html_sink));
    for (const std::string& imported : captures(js, import_from)) pending.insert(imported);
  }
  // app.js and the modules it reaches: the page is more than one file, all of them served.
  CHECK(seen.size() >= 5);
}
