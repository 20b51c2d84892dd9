#pragma once
// The kinds of a customer's media that have a size cap of their own (media/policy.h's
// Limits). A WhatsApp message says its kind (image, audio, video, document, sticker); a mail
// attachment has none, so it is classified by its content type (media::kind_of). Here, not
// in media/, because the channels that name a message's kind do not link media/.

namespace dispatchd::common {

enum class MediaKind { image, audio, video, document, sticker };

}  // namespace dispatchd::common
