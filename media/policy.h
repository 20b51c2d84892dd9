#pragma once
// The rules on a customer's file, as pure functions: the declared content type against the
// sniffed one (sniff.h), a mail attachment's kind, how the staff page may be served a stored
// file, and the size caps. No I/O; safe from any thread.
//
// Content types are compared by their essence (below) after the aliases of one format:
// image/jpg and image/pjpeg are image/jpeg, audio/mp3 audio/mpeg, audio/x-m4a audio/mp4,
// audio/x-wav and audio/wave audio/wav, audio/opus and application/ogg audio/ogg,
// application/x-pdf application/pdf, text/xml application/xml, and the like.

#include <cstdint>
#include <string>
#include <string_view>

#include "common/media_kind.h"

namespace dispatchd::media {

// The essence of a content type: type/subtype in lower case, without parameters and the
// whitespace around it ("Audio/OGG; codecs=opus" is "audio/ogg"). "" when `content_type` is
// not of that form (no `/`, an empty part, a byte that may not be in a token).
std::string essence(std::string_view content_type);

enum class TypeMatch {
  same,     // one format, or one container: audio/mp4 and video/mp4 (or video/quicktime),
            // audio/webm and video/webm, the Ogg types, audio/3gpp and video/3gpp; also a
            // format built on what was sniffed: a zip-based one (docx, xlsx, odt, `+zip`) when
            // application/zip was, an `+xml` one when application/xml was
  differs,  // the bytes show another format than the one declared
  unknown,  // a side says nothing: sniffed "", or declared "", malformed or
            // application/octet-stream
};

// What the bytes (`sniffed`, sniff()'s answer) say of what the sender declared (a WhatsApp
// message's mime_type such as "audio/ogg; codecs=opus", a mail part's Content-Type).
TypeMatch compare(std::string_view declared, std::string_view sniffed);

// A mail attachment's kind, from its content type after the aliases (application/ogg is
// audio/ogg): image/* is image, except image/svg+xml, which is a document (SVG is active
// content, never an image to show); audio/* audio; video/* video; anything else, a
// malformed type included, document. Never sticker.
common::MediaKind kind_of(std::string_view content_type);

enum class Disposition { inline_image, inline_audio, attachment };

// How the staff endpoint may serve a stored file. Inline only when both the stored
// (declared) type and the sniffed type are on the short list of formats a browser shows
// without running anything, and both are of one family:
//  - inline_image: both among image/jpeg, image/png, image/gif, image/webp, image/bmp (a
//    JPEG declared and a PNG sniffed is still a raster image);
//  - inline_audio: the stored type among audio/ogg, audio/mpeg, audio/mp4, audio/aac,
//    audio/amr, audio/wav, audio/webm, and the sniffed one among those or of the stored
//    type's container (video/mp4 for audio/mp4, video/webm for audio/webm: the bytes of an
//    audio-only MP4 or WebM file do not say it has no video).
// Anything else is an attachment (Content-Disposition: attachment): SVG, HTML, XML, PDF, a
// type on the list that the bytes do not bear out, a file whose bytes show nothing. Serve an
// inline file with the sniffed type and X-Content-Type-Options: nosniff.
Disposition serving(std::string_view stored_type, std::string_view sniffed_type);

// The size caps, in bytes: each kind's, and all stored media together.
struct Limits {
  std::int64_t image = std::int64_t{5} << 20;      // 5 MiB, WhatsApp's own image limit
  std::int64_t audio = std::int64_t{16} << 20;     // 16 MiB, WhatsApp's
  std::int64_t video = std::int64_t{16} << 20;     // 16 MiB, WhatsApp's
  std::int64_t document = std::int64_t{25} << 20;  // 25 MiB, Gmail's attachment limit (WhatsApp allows 100 MB)
  std::int64_t sticker = std::int64_t{512} << 10;  // 512 KiB, WhatsApp's animated sticker (500 KB)
  std::int64_t total = std::int64_t{10} << 30;     // 10 GiB
};

// The cap of one kind.
std::int64_t cap(const Limits& limits, common::MediaKind kind);

enum class SizeVerdict { fits, over_type_cap, over_total };

// Whether a file of `size` bytes of `kind` may be stored when `stored_total` bytes of media
// are stored already. A size equal to a cap fits; the kind's cap is checked first. A negative
// size is over_type_cap and a negative stored_total over_total: refused, never fits.
SizeVerdict admit(const Limits& limits, common::MediaKind kind, std::int64_t size, std::int64_t stored_total);

}  // namespace dispatchd::media
