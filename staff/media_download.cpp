#include "staff/media_download.h"

#include "common/text.h"
#include "media/policy.h"

namespace dispatchd::staff {

MediaServing media_serving(const store::MediaRow& file) {
  MediaServing out;
  const auto shown = media::serving(file.declared_type, file.sniffed_type);
  out.inline_shown = shown != media::Disposition::attachment;
  std::string type = media::essence(file.declared_type);
  if (type.empty()) type = "application/octet-stream";
  out.content_type = std::move(type);
  out.disposition =
      std::string(out.inline_shown ? "inline" : "attachment") + "; filename=\"media-" + std::to_string(file.id) + "\"";
  if (!file.filename.empty()) out.disposition += "; filename*=UTF-8''" + text::percent_encode(file.filename);
  return out;
}

}  // namespace dispatchd::staff
