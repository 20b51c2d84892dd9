// Customers' files to the model: which dialect reads what (llm/media.h, a table), and each
// dialect's request with files against the providers' own documented examples
// (tests/data/llm/, each with its source page): the same parts, keys, nesting and types.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "llm/media.h"
#include "tests/llm/harness.h"
#include "tests/test_util.h"

using namespace dispatchd;
using common::MediaKind;
using fakes::FakeReply;
using llm::MediaFit;
using llm::ProviderKind;

namespace {

// The structure of a JSON value, without its values: objects by their keys (sorted), arrays
// by the distinct structures of their elements, scalars by their type.
std::string shape(const rapidjson::Value& v) {
  if (v.IsObject()) {
    std::set<std::string> members;
    for (const auto& m : v.GetObject()) members.insert(std::string(m.name.GetString()) + ":" + shape(m.value));
    std::string out = "{";
    for (const auto& m : members) out += m + ",";
    return out + "}";
  }
  if (v.IsArray()) {
    std::set<std::string> elements;
    for (const auto& e : v.GetArray()) elements.insert(shape(e));
    std::string out = "[";
    for (const auto& e : elements) out += e + ";";
    return out + "]";
  }
  if (v.IsString()) return "string";
  if (v.IsNumber()) return "number";
  if (v.IsBool()) return "bool";
  return "null";
}

// The parts of the first user turn of a body: Gemini's contents[0].parts, the others'
// messages[i].content of the first user message.
const rapidjson::Value& user_parts(ProviderKind kind, const rapidjson::Value& body) {
  if (kind == ProviderKind::gemini) return body["contents"][0]["parts"];
  for (const auto& message : body["messages"].GetArray()) {
    if (std::string_view(message["role"].GetString()) == "user") return message["content"];
  }
  FAIL("no user message");
  return body;
}

llm::Attachment file(std::string type, std::string bytes) {
  return {std::move(type), "", std::make_shared<const std::string>(std::move(bytes))};
}

llm::CompletionRequest with_files(std::vector<llm::Attachment> files) {
  return {"SYSTEM PROMPT",
          {{llm::Role::user, "New whatsapp message from 15551234567:\n[image: roto]", std::move(files)}},
          llm::output_schema(test::support_en())};
}

// What the dialect sent for `files`, parsed.
rapidjson::Document sent(ProviderKind kind, std::vector<llm::Attachment> files) {
  const bool any = !files.empty();
  test::Harness h(kind);
  h.fake.push(FakeReply::text(R"({"action":"escalate_to_human","reason":"photo"})"));
  const auto result = h.call(*h.provider, with_files(std::move(files)));
  CHECK(result.has_value());
  if (result) CHECK((result->info.request_summary.find(" files=") != std::string::npos) == any);
  return h.last_body();
}

}  // namespace

TEST_CASE("media: which dialect reads which file, as a table") {
  struct Row {
    std::vector<ProviderKind> providers;
    MediaKind kind;
    std::string type;
    std::int64_t size;
    MediaFit fit;
  };
  using enum ProviderKind;
  const std::vector<Row> rows = {
      {{openai}, MediaKind::image, "image/jpeg", 1000, MediaFit::fits},
      {{openai}, MediaKind::image, "image/png", 1000, MediaFit::fits},
      {{openai}, MediaKind::image, "image/heic", 1000, MediaFit::type_unread},
      {{openai}, MediaKind::document, "application/pdf", 1000, MediaFit::kind_unread},
      {{openai}, MediaKind::audio, "audio/ogg", 1000, MediaFit::kind_unread},
      {{openai}, MediaKind::image, "image/jpeg", 15'000'000, MediaFit::fits},       // 20 MB as base64
      {{openai}, MediaKind::image, "image/jpeg", 15'000'001, MediaFit::too_large},  // 20,000,004 as base64
      {{gemini}, MediaKind::image, "image/heic", 1000, MediaFit::fits},
      {{gemini}, MediaKind::document, "application/pdf", 1000, MediaFit::fits},
      {{gemini}, MediaKind::document, "application/msword", 1000, MediaFit::type_unread},
      {{gemini}, MediaKind::audio, "audio/ogg", 1000, MediaFit::fits},
      {{gemini}, MediaKind::audio, "audio/mpeg", 1000, MediaFit::fits},
      {{gemini}, MediaKind::audio, "audio/amr", 1000, MediaFit::type_unread},
      {{gemini}, MediaKind::video, "video/mp4", 1000, MediaFit::kind_unread},
      {{gemini}, MediaKind::document, "application/pdf", 14'250'000, MediaFit::fits},  // 19 MB as base64
      {{gemini}, MediaKind::document, "application/pdf", 14'250'001, MediaFit::too_large},
      {{anthropic}, MediaKind::image, "image/webp", 1000, MediaFit::fits},
      {{anthropic}, MediaKind::image, "image/jpeg", 3'750'000, MediaFit::fits},  // 5 MB as base64
      {{anthropic}, MediaKind::image, "image/jpeg", 3'750'001, MediaFit::too_large},
      {{anthropic}, MediaKind::document, "application/pdf", 1000, MediaFit::fits},
      {{anthropic}, MediaKind::audio, "audio/ogg", 1000, MediaFit::kind_unread},
      {{anthropic}, MediaKind::sticker, "image/webp", 1000, MediaFit::kind_unread},
      // A router: every provider must read it.
      {{gemini, anthropic}, MediaKind::document, "application/pdf", 1000, MediaFit::fits},
      {{gemini, openai}, MediaKind::document, "application/pdf", 1000, MediaFit::kind_unread},
      {{openai, anthropic}, MediaKind::image, "image/jpeg", 4'000'000, MediaFit::too_large},
      {{}, MediaKind::image, "image/jpeg", 1000, MediaFit::no_provider},
  };
  for (const auto& row : rows) {
    const auto support = llm::media_support(row.providers, row.kind, row.type, row.size);
    INFO(row.type << " " << row.size << ": " << support.why);
    CHECK(support.fit == row.fit);
    CHECK(support.why.empty() == (row.fit == MediaFit::fits));
  }
  CHECK(llm::media_support({ProviderKind::openai, ProviderKind::anthropic}, MediaKind::image, "image/png", 10)
            .max_file_bytes == 5'000'000);
  CHECK(llm::media_support({ProviderKind::openai, ProviderKind::gemini}, MediaKind::image, "image/png", 10)
            .max_request_bytes == 19'000'000);
  const auto why = llm::media_support({ProviderKind::openai}, MediaKind::audio, "audio/ogg", 10).why;
  CHECK(why == "the openai provider cannot read audio files");
}

TEST_CASE("media: the kinds each dialect reads, for --check-config") {
  CHECK(llm::reads_kind(ProviderKind::openai, MediaKind::image));
  CHECK_FALSE(llm::reads_kind(ProviderKind::openai, MediaKind::document));
  CHECK_FALSE(llm::reads_kind(ProviderKind::openai, MediaKind::audio));
  CHECK(llm::reads_kind(ProviderKind::gemini, MediaKind::audio));
  CHECK(llm::reads_kind(ProviderKind::gemini, MediaKind::document));
  CHECK(llm::reads_kind(ProviderKind::anthropic, MediaKind::document));
  CHECK_FALSE(llm::reads_kind(ProviderKind::anthropic, MediaKind::audio));
  for (const auto kind : {ProviderKind::openai, ProviderKind::gemini, ProviderKind::anthropic}) {
    CHECK_FALSE(llm::reads_kind(kind, MediaKind::video));
    CHECK_FALSE(llm::reads_kind(kind, MediaKind::sticker));
  }
  CHECK(llm::media_request_bytes(0) == 0);
  CHECK(llm::media_request_bytes(1) == 4);
  CHECK(llm::media_request_bytes(3) == 4);
  CHECK(llm::media_request_bytes(4) == 8);
}

TEST_CASE("media: each dialect's request with a file has the shape of the provider's documented example") {
  struct Row {
    ProviderKind kind;
    std::string example;
    std::string type;
  };
  const std::vector<Row> rows = {
      {ProviderKind::openai, "openai_image.json", "image/jpeg"},
      {ProviderKind::gemini, "gemini_image.json", "image/jpeg"},
      {ProviderKind::gemini, "gemini_pdf.json", "application/pdf"},
      {ProviderKind::gemini, "gemini_audio.json", "audio/ogg"},
      {ProviderKind::anthropic, "anthropic_image.json", "image/jpeg"},
      {ProviderKind::anthropic, "anthropic_pdf.json", "application/pdf"},
  };
  for (const auto& row : rows) {
    INFO(row.example);
    const auto example = test::parse_json(test::read_file(test::source_path("tests/data/llm/" + row.example)));
    REQUIRE(example.HasMember("source"));
    const auto body = sent(row.kind, {file(row.type, "\xff\xd8\xff\xe0 some bytes")});
    CHECK(shape(user_parts(row.kind, body)) == shape(user_parts(row.kind, example["body"])));
  }
}

TEST_CASE("media: the files' bytes are sent as standard base64, with their content types") {
  // RFC 4648's test vectors, and bytes that are not text.
  const std::vector<std::pair<std::string, std::string>> vectors = {
      {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foobar", "Zm9vYmFy"}, {std::string("\xff\xfe\x00", 3), "//4A"}};
  std::vector<llm::Attachment> files;
  for (const auto& [bytes, encoded] : vectors) files.push_back(file("image/png", bytes));

  const auto gemini = sent(ProviderKind::gemini, files);
  const auto& parts = gemini["contents"][0]["parts"];
  REQUIRE(parts.Size() == vectors.size() + 1);
  for (std::size_t i = 0; i < vectors.size(); ++i) {
    CHECK(std::string(parts[i]["inline_data"]["data"].GetString()) == vectors[i].second);
    CHECK(std::string(parts[i]["inline_data"]["mime_type"].GetString()) == "image/png");
  }
  CHECK(std::string(parts[vectors.size()]["text"].GetString()).ends_with("[image: roto]"));

  const auto openai = sent(ProviderKind::openai, files);
  const auto& content = openai["messages"][1]["content"];
  REQUIRE(content.Size() == vectors.size() + 1);
  CHECK(std::string(content[0]["type"].GetString()) == "text");
  for (std::size_t i = 0; i < vectors.size(); ++i)
    CHECK(std::string(content[i + 1]["image_url"]["url"].GetString()) == "data:image/png;base64," + vectors[i].second);

  const auto anthropic = sent(ProviderKind::anthropic, {file("application/pdf", "foobar"), file("image/gif", "fo")});
  const auto& blocks = anthropic["messages"][0]["content"];
  REQUIRE(blocks.Size() == 3);
  CHECK(std::string(blocks[0]["type"].GetString()) == "document");
  CHECK(std::string(blocks[0]["source"]["media_type"].GetString()) == "application/pdf");
  CHECK(std::string(blocks[0]["source"]["data"].GetString()) == "Zm9vYmFy");
  CHECK(std::string(blocks[1]["type"].GetString()) == "image");
  CHECK(std::string(blocks[1]["source"]["data"].GetString()) == "Zm8=");
  CHECK(std::string(blocks[2]["type"].GetString()) == "text");
}

TEST_CASE("media: a turn without files is sent as before, its content a string") {
  const auto body = sent(ProviderKind::openai, {});
  CHECK(body["messages"][1]["content"].IsString());
}
