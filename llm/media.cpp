#include "llm/media.h"

#include <algorithm>
#include <array>
#include <limits>

namespace dispatchd::llm {
namespace {

using common::MediaKind;

constexpr std::int64_t k_mb = 1'000'000;
// Kept for the request's text (system prompt, history, schema) under a documented request limit.
constexpr std::int64_t k_text_room = 1 * k_mb;

constexpr std::int64_t k_openai_file = 20 * k_mb;
constexpr std::int64_t k_openai_request = 50 * k_mb - k_text_room;
constexpr std::int64_t k_gemini_request = 20 * k_mb - k_text_room;
constexpr std::int64_t k_anthropic_image = 5 * k_mb;
constexpr std::int64_t k_anthropic_request = 32 * k_mb - k_text_room;

constexpr std::array k_rules = {
    MediaRule{ProviderKind::openai, MediaKind::image, "image/png", k_openai_file},
    MediaRule{ProviderKind::openai, MediaKind::image, "image/jpeg", k_openai_file},
    MediaRule{ProviderKind::openai, MediaKind::image, "image/webp", k_openai_file},
    MediaRule{ProviderKind::openai, MediaKind::image, "image/gif", k_openai_file},
    MediaRule{ProviderKind::gemini, MediaKind::image, "image/png", k_gemini_request},
    MediaRule{ProviderKind::gemini, MediaKind::image, "image/jpeg", k_gemini_request},
    MediaRule{ProviderKind::gemini, MediaKind::image, "image/webp", k_gemini_request},
    MediaRule{ProviderKind::gemini, MediaKind::image, "image/heic", k_gemini_request},
    MediaRule{ProviderKind::gemini, MediaKind::image, "image/heif", k_gemini_request},
    MediaRule{ProviderKind::gemini, MediaKind::document, "application/pdf", k_gemini_request},
    MediaRule{ProviderKind::gemini, MediaKind::audio, "audio/wav", k_gemini_request},
    MediaRule{ProviderKind::gemini, MediaKind::audio, "audio/mp3", k_gemini_request},
    MediaRule{ProviderKind::gemini, MediaKind::audio, "audio/mpeg", k_gemini_request},
    MediaRule{ProviderKind::gemini, MediaKind::audio, "audio/aiff", k_gemini_request},
    MediaRule{ProviderKind::gemini, MediaKind::audio, "audio/aac", k_gemini_request},
    MediaRule{ProviderKind::gemini, MediaKind::audio, "audio/ogg", k_gemini_request},
    MediaRule{ProviderKind::gemini, MediaKind::audio, "audio/flac", k_gemini_request},
    MediaRule{ProviderKind::anthropic, MediaKind::image, "image/jpeg", k_anthropic_image},
    MediaRule{ProviderKind::anthropic, MediaKind::image, "image/png", k_anthropic_image},
    MediaRule{ProviderKind::anthropic, MediaKind::image, "image/gif", k_anthropic_image},
    MediaRule{ProviderKind::anthropic, MediaKind::image, "image/webp", k_anthropic_image},
    MediaRule{ProviderKind::anthropic, MediaKind::document, "application/pdf", k_anthropic_request},
};

const MediaRule* rule_for(ProviderKind provider, std::string_view content_type) {
  const auto found = std::ranges::find_if(
      k_rules, [&](const MediaRule& r) { return r.provider == provider && r.content_type == content_type; });
  return found == k_rules.end() ? nullptr : &*found;
}

}  // namespace

std::span<const MediaRule> media_rules() { return k_rules; }

std::int64_t max_request_media_bytes(ProviderKind provider) {
  switch (provider) {
    case ProviderKind::openai: return k_openai_request;
    case ProviderKind::gemini: return k_gemini_request;
    case ProviderKind::anthropic: break;
  }
  return k_anthropic_request;
}

std::int64_t media_request_bytes(std::int64_t bytes) { return bytes <= 0 ? 0 : 4 * ((bytes + 2) / 3); }

bool reads_kind(ProviderKind provider, common::MediaKind kind) {
  return std::ranges::any_of(k_rules, [&](const MediaRule& r) { return r.provider == provider && r.kind == kind; });
}

std::string_view kind_name(common::MediaKind kind) {
  switch (kind) {
    case MediaKind::image: return "image";
    case MediaKind::audio: return "audio";
    case MediaKind::video: return "video";
    case MediaKind::document: return "document";
    case MediaKind::sticker: break;
  }
  return "sticker";
}

MediaSupport media_support(const std::vector<ProviderKind>& providers, common::MediaKind kind,
                           std::string_view content_type, std::int64_t size) {
  MediaSupport out;
  if (providers.empty()) {
    out.why = "no model provider is configured to read files";
    return out;
  }
  out.max_file_bytes = std::numeric_limits<std::int64_t>::max();
  out.max_request_bytes = std::numeric_limits<std::int64_t>::max();
  for (const ProviderKind provider : providers)
    out.max_request_bytes = std::min(out.max_request_bytes, max_request_media_bytes(provider));
  const std::int64_t sent = media_request_bytes(size);
  for (const ProviderKind provider : providers) {
    const std::string name(to_string(provider));
    const MediaRule* rule = rule_for(provider, content_type);
    if (!reads_kind(provider, kind)) {
      return {MediaFit::kind_unread, "the " + name + " provider cannot read " + std::string(kind_name(kind)) + " files",
              0, out.max_request_bytes};
    }
    if (!rule || rule->kind != kind) {
      return {MediaFit::type_unread,
              "the " + name + " provider cannot read " +
                  (content_type.empty() ? "untyped" : std::string(content_type)) + " files",
              0, out.max_request_bytes};
    }
    if (sent > rule->max_file_bytes) {
      return {MediaFit::too_large,
              "it is larger than the " + name + " provider reads (" + std::to_string(sent) +
                  " bytes as base64, at most " + std::to_string(rule->max_file_bytes) + ")",
              0, out.max_request_bytes};
    }
    out.max_file_bytes = std::min(out.max_file_bytes, rule->max_file_bytes);
  }
  out.fit = MediaFit::fits;
  return out;
}

}  // namespace dispatchd::llm
