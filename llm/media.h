#pragma once
// Which customers' files each provider dialect reads, and how large: one table, from the
// providers' documentation (docs/media.md, "To the model"), pure and tested as a table.
//
//   dialect    kind      content types                                   per file  per request
//   openai     image     image/png image/jpeg image/webp image/gif        20 MB     50 MB
//   gemini     image     image/png image/jpeg image/webp image/heic        20 MB     20 MB
//                        image/heif
//              document  application/pdf
//              audio     audio/wav audio/mp3 audio/mpeg audio/aiff
//                        audio/aac audio/ogg audio/flac
//   anthropic  image     image/jpeg image/png image/gif image/webp          5 MB     32 MB
//              document  application/pdf                                  32 MB
//
// Sizes are measured on what is sent: the file's base64 text (media_request_bytes), 4/3 of
// the file, against the documented limit less 1 MB kept for the prompt's text (per request:
// all files of a request together). MB here is 1,000,000 bytes. The sources:
//   openai     https://platform.openai.com/docs/guides/images-vision (image_url data URLs)
//   gemini     https://ai.google.dev/gemini-api/docs/image-understanding, .../document-processing,
//              .../audio (inline_data: the whole request under 20 MB)
//   anthropic  https://docs.claude.com/en/docs/build-with-claude/vision (5 MB per image),
//              .../pdf-support (32 MB per request)
// A router of several providers (llm/router.h) may send a call to any of them: a file goes
// only when every configured dialect takes it, within the smallest limits (media_support).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/media_kind.h"
#include "llm/providers.h"

namespace dispatchd::llm {

struct MediaRule {
  ProviderKind provider = ProviderKind::openai;
  common::MediaKind kind = common::MediaKind::image;
  std::string_view content_type;    // an essence: lower case, no parameters
  std::int64_t max_file_bytes = 0;  // the base64 text of one file, at most
};

// Every (dialect, content type) a dialect reads; a pair not in it is not read.
std::span<const MediaRule> media_rules();

// The base64 text of all the files of one request, at most, for a dialect.
std::int64_t max_request_media_bytes(ProviderKind provider);

// The size of `bytes` bytes as base64 text with its padding: 4 * ceil(bytes / 3).
std::int64_t media_request_bytes(std::int64_t bytes);

// Whether `provider` reads some content type of `kind` (--check-config's question about a
// `model` rule for a message type).
bool reads_kind(ProviderKind provider, common::MediaKind kind);

enum class MediaFit {
  fits,         // every provider reads it, within its per-file limit
  no_provider,  // no provider is configured to read files (e.g. a test's)
  kind_unread,  // a provider reads no file of this kind
  type_unread,  // a provider reads this kind, but not this content type
  too_large,    // over a provider's per-file limit
};

struct MediaSupport {
  MediaFit fit = MediaFit::no_provider;
  std::string why;                     // fits: ""; otherwise one line naming the provider and what it lacks
  std::int64_t max_file_bytes = 0;     // fits: the smallest per-file limit of them
  std::int64_t max_request_bytes = 0;  // the smallest per-request limit of them (0 without providers)
};

// Whether a file of `kind`, `content_type` (an essence) and `size` bytes may go to the
// model when the call may go to any of `providers` (the primary and llm.fallbacks).
MediaSupport media_support(const std::vector<ProviderKind>& providers, common::MediaKind kind,
                           std::string_view content_type, std::int64_t size);

// "image", "audio", "video", "document", "sticker".
std::string_view kind_name(common::MediaKind kind);

}  // namespace dispatchd::llm
