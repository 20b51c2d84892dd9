// Fuzz target: a Gmail attachment's download (connectors/gmail/attachment.h). The input is
// messages.attachments.get's answer streamed through AttachmentData whole and in pieces of
// 1 to 64 bytes (the first byte picks the size); read as messages.get?format=full's answer for
// the part named by its first line; and its first line as a file's handle.
// Invariants: the pieces change nothing (the same bytes handed over, the same verdict); an
// accepted answer's bytes are its data's base64url decoding, at most 3/4 of the input; a
// refusal says why in one line; a part found has the partId asked for and no inline data
// beside an attachment id; a handle read back is written again the same.

#include <string>

#include "connectors/gmail/attachment.h"
#include "connectors/gmail/base64url.h"
#include "fuzz/fuzz.h"

namespace {

using namespace dispatchd;

constexpr const char* k_target = "gmail_attachment";

struct Streamed {
  std::string bytes;
  bool accepted = false;
  std::string error;
};

Streamed stream(std::string_view json, std::size_t piece) {
  Streamed out;
  gmail::AttachmentData reader([&out](std::string_view bytes) {
    out.bytes.append(bytes);
    return true;
  });
  for (std::size_t at = 0; at < json.size(); at += piece) {
    if (reader.feed(json.substr(at, piece)) != gmail::AttachmentData::Fed::more) break;
  }
  auto done = reader.finish();
  out.accepted = done.has_value();
  if (!done) out.error = done.error();
  fuzz::require(reader.decoded() == static_cast<std::int64_t>(out.bytes.size()), k_target,
                "decoded() is not the bytes handed over");
  return out;
}

void check_stream(std::string_view input) {
  const auto whole = stream(input, input.size() + 1);
  const std::size_t piece = input.empty() ? 1 : static_cast<unsigned char>(input[0]) % 64 + 1;
  const auto pieces = stream(input, piece);
  fuzz::require(whole.accepted == pieces.accepted && whole.bytes == pieces.bytes, k_target,
                "the answer read in pieces differs from the answer read whole");
  if (!whole.accepted) {
    fuzz::require(!whole.error.empty() && whole.error.find('\n') == std::string::npos, k_target,
                  "a refusal without a one-line reason");
    return;
  }
  fuzz::require(whole.bytes.size() * 4 <= input.size() * 3, k_target, "more bytes than the data can hold");
  // The data member as a plain search finds it when it is the only one of its kind.
  const std::size_t key = input.find("\"data\"");
  if (key != std::string_view::npos && input.find("\"data\"", key + 1) == std::string_view::npos &&
      input.find('\\') == std::string_view::npos) {
    const std::size_t open = input.find('"', input.find(':', key + 6));
    const std::size_t close = input.find('"', open + 1);
    if (open != std::string_view::npos && close != std::string_view::npos) {
      const auto decoded = gmail::base64url_decode(input.substr(open + 1, close - open - 1));
      fuzz::require(decoded && *decoded == whole.bytes, k_target, "the bytes are not the data's decoding");
    }
  }
}

void check_part(std::string_view input) {
  const std::string part_id(input.substr(0, input.find('\n')));
  const net::HttpResult answer = net::HttpResponse{200, {}, std::string(input)};
  const auto part = gmail::read_part(answer, part_id);
  if (!part) {
    fuzz::require(!part.error().message.empty(), k_target, "an unreadable part answer without a message");
    return;
  }
  if (!*part) return;
  fuzz::require((*part)->part_id == part_id, k_target, "a part found under another partId");
  fuzz::require((*part)->attachment_id.empty() || (*part)->data.empty(), k_target,
                "inline data beside an attachment id");
}

void check_ref(std::string_view input) {
  const auto ref = gmail::parse_attachment_ref(input.substr(0, input.find('\n')));
  if (!ref) return;
  std::vector<int> path;
  std::string_view rest = ref->part_id;
  while (!rest.empty()) {
    const std::size_t dot = rest.find('.');
    const std::string_view index = rest.substr(0, dot);
    if (index.size() > 9) return;  // too large for an int: written back, it would differ
    path.push_back(std::stoi(std::string(index)));
    rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
  }
  const std::string written = gmail::attachment_ref(ref->message_id, path);
  const auto again = gmail::parse_attachment_ref(written);
  fuzz::require(again && again->message_id == ref->message_id && again->part_id == gmail::part_id_of(path), k_target,
                "a handle written again does not read back");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input = fuzz::text(data, size);
  check_stream(input);
  check_part(input);
  check_ref(input);
  return 0;
}
