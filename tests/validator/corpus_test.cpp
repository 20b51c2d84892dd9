// The corpus of raw model replies in tests/data/replies/: each *.txt is one reply exactly as
// a model sent it, and expected.tsv says what the validator must decide about it.
//
// Manifest columns (tab-separated; blank lines and lines starting with '#' are ignored):
//   file  catalog(en|es)  sender|-  source|-  verdict(ok|review|reject)  stage|-  codes|-  repairs|-
// `ok` means valid with no review flag; `review` means valid but routed to staff, and then
// `codes` are review-flag codes; for `reject`, `stage` is the failed stage and `codes` are
// error codes. Every listed code and repair must appear in the verdict (others may too).

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.h"
#include "validator/validator.h"

namespace fs = std::filesystem;
using namespace dispatchd;

namespace {

const std::string k_dir = "tests/data/replies";

struct Row {
  std::size_t line = 0;
  std::string file, catalog, sender, source, verdict, stage;
  std::vector<std::string> codes, repairs;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

std::vector<std::string> list(const std::string& cell) {
  if (cell == "-") return {};
  return split(cell, ',');
}

struct Manifest {
  std::vector<Row> rows;
  std::vector<std::string> problems;  // unreadable file or malformed lines
};

// Reads and checks the manifest once; every malformed line is reported by number.
Manifest read_manifest() {
  Manifest manifest;
  const std::string path = test::source_path(k_dir + "/expected.tsv");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    manifest.problems.push_back("cannot open " + path);
    return manifest;
  }
  std::string text;
  std::size_t number = 0;
  while (std::getline(in, text)) {
    ++number;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.empty() || text.front() == '#') continue;
    const auto bad = [&](const std::string& why) {
      manifest.problems.push_back("expected.tsv line " + std::to_string(number) + ": " + why + ": " + text);
    };
    const auto cells = split(text, '\t');
    if (cells.size() != 8) {
      bad("expected 8 tab-separated columns, got " + std::to_string(cells.size()));
      continue;
    }
    if (std::any_of(cells.begin(), cells.end(), [](const std::string& c) { return c.empty(); })) {
      bad("an empty column (write - for none)");
      continue;
    }
    Row row{number, cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], list(cells[6]), list(cells[7])};
    const bool valid = row.verdict == "ok" || row.verdict == "review";
    if (!row.file.ends_with(".txt") || row.file.find('/') != std::string::npos)
      bad("file must be a .txt name in the folder");
    else if (row.catalog != "en" && row.catalog != "es")
      bad("catalog must be en or es");
    else if (!valid && row.verdict != "reject")
      bad("verdict must be ok, review or reject");
    else if (valid && row.stage != "-")
      bad("a valid reply has no failed stage (write -)");
    else if (!valid && row.stage != "extract" && row.stage != "parse" && row.stage != "contract" &&
             row.stage != "policy")
      bad("stage must be extract, parse, contract or policy");
    else if (row.verdict == "ok" && !row.codes.empty())
      bad("an ok reply has no codes (use review for flags)");
    else if (row.verdict != "ok" && row.codes.empty())
      bad("review and reject rows must name at least one code");
    else
      manifest.rows.push_back(std::move(row));
  }
  if (manifest.rows.empty() && manifest.problems.empty()) manifest.problems.push_back("no rows in " + path);
  return manifest;
}

// The manifest, read once for all sections; a test case that uses it fails when it is bad.
const std::vector<Row>& manifest_rows() {
  static const Manifest manifest = read_manifest();
  for (const auto& problem : manifest.problems) FAIL_CHECK(problem);
  REQUIRE(manifest.problems.empty());
  return manifest.rows;
}

template <typename T>
std::vector<std::string> codes_of(const std::vector<T>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) out.push_back(item.code);
  return out;
}

bool contains(const std::vector<std::string>& haystack, const std::string& needle) {
  return std::find(haystack.begin(), haystack.end(), needle) != haystack.end();
}

}  // namespace

TEST_CASE("corpus: the manifest lists every reply file, at least 90 of them", "[corpus]") {
  const std::vector<Row>& rows = manifest_rows();
  CHECK(rows.size() >= 90);

  std::set<std::string> listed;
  for (const auto& row : rows) {
    INFO("expected.tsv line " << row.line);
    CHECK(listed.insert(row.file).second);  // no file twice
    CHECK(fs::is_regular_file(test::source_path(k_dir + "/" + row.file)));
    if (row.source != "-") CHECK(fs::is_regular_file(test::source_path(k_dir + "/sources/" + row.source)));
  }

  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(test::source_path(k_dir))) {
    if (!entry.is_regular_file() || entry.path().extension() != ".txt") continue;
    ++files;
    const std::string name = entry.path().filename().string();
    INFO("reply file not in expected.tsv: " << name);
    CHECK(listed.count(name) == 1);
  }
  CHECK(files == rows.size());
}

TEST_CASE("corpus: every reply gets its expected verdict", "[corpus]") {
  const std::vector<Row>& rows = manifest_rows();
  REQUIRE_FALSE(rows.empty());
  for (const auto& row : rows) {
    DYNAMIC_SECTION(row.file) {
      INFO("expected.tsv line " << row.line << ": " << row.file);
      const std::string reply = test::read_file(test::source_path(k_dir + "/" + row.file));
      validator::Context context;
      if (row.sender != "-") context.sender = row.sender;
      if (row.source != "-") context.source = test::read_file(test::source_path(k_dir + "/sources/" + row.source));
      const catalog::Catalog& catalog = row.catalog == "es" ? test::support_es() : test::support_en();

      const validator::Verdict verdict = validator::validate(catalog, reply, context);
      INFO("verdict: " << validator::to_json(verdict));

      const std::string got = !verdict.ok ? "reject" : verdict.needs_review() ? "review" : "ok";
      CHECK(got == row.verdict);
      if (row.verdict == "reject") {
        REQUIRE(verdict.failed_stage.has_value());
        CHECK(std::string(validator::to_string(*verdict.failed_stage)) == row.stage);
        CHECK_FALSE(verdict.feedback.empty());
      } else {
        CHECK_FALSE(verdict.failed_stage.has_value());
        CHECK(verdict.errors.empty());
      }
      if (verdict.ok) {
        CHECK_FALSE(verdict.output.empty());
        CHECK_FALSE(verdict.action.empty());
      }

      const auto codes = codes_of(row.verdict == "reject" ? verdict.errors : verdict.review);
      for (const auto& code : row.codes) {
        INFO("expected code: " << code);
        CHECK(contains(codes, code));
      }
      const auto repairs = codes_of(verdict.repairs);
      for (const auto& repair : row.repairs) {
        INFO("expected repair: " << repair);
        CHECK(contains(repairs, repair));
      }
    }
  }
}
