#pragma once
// The kinds of customers' media, each with a size cap of its own (media.max_bytes). A
// channel that names the kind says it (WhatsApp's message types); a mail attachment is
// classified by its content type.

namespace dispatchd::common {

enum class MediaKind { image, audio, video, document, sticker };

}  // namespace dispatchd::common
