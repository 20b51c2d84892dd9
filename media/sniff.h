#pragma once
// What a file's first bytes show it to be: a content type read from the bytes alone, never
// from what the sender declared (policy.h compares the two). Pure; safe from any thread.
//
// The patterns are the WHATWG MIME Sniffing standard's tables where they apply (images,
// audio and video, archives, the scriptable markup that starts with `<`), with these
// differences, each on the side of naming a file rather than guessing:
//  - OggS is audio/ogg (the standard says application/ogg): WhatsApp's voice notes are Ogg
//    Opus, and policy.h's compare() treats the Ogg types as one.
//  - RIFF....WAVE is audio/wav (the standard: audio/wave).
//  - an ISO media file (an `ftyp` box) is typed by its brands: M4A /M4B /M4P audio/mp4,
//    3gp/3g2 video/3gpp, `qt  ` video/quicktime, HEIF and AVIF images image/heic and
//    image/avif, the generic and MP4 brands (isom, iso2.., mp41, mp42, avc1, …) video/mp4
//    unless a compatible brand is more specific; a box whose brands are all unknown is "".
//  - an MP3 stream without ID3 is its first Layer III frame header, and the next one when it
//    starts within the sniffed bytes; ADTS (AAC) the same. BMP needs a known DIB header size
//    after "BM", not the two letters alone.
//  - markup: after an optional UTF-8 byte order mark and whitespace, the standard's HTML
//    tags (`<!DOCTYPE HTML`, `<html`, `<head`, `<script`, `<iframe`, `<body`, `<div`, …,
//    case-insensitive, ended by whitespace, `>` or `/`) are text/html. Otherwise an XML
//    declaration, comments, processing instructions and a doctype are skipped to the root
//    element: `svg` is image/svg+xml, `html` text/html; any other root, or none within the
//    sniffed bytes, is application/xml after an XML declaration and text/html after a
//    leading comment (the standard's `<!--`). A namespace prefix (`svg:svg`) is ignored.
//    UTF-16 text is not read: it is "".
//
// Text without a signature (plain text, CSV) is "" too: the bytes do not show a type.

#include <cstddef>
#include <string_view>

namespace dispatchd::media {

// The most of the head that sniff() reads; callers need not read more of a file.
inline constexpr std::size_t k_sniff_bytes = 1024;

// The content type (lower-case, without parameters, e.g. "image/png") that the first bytes
// of a file show, or "" when none of the patterns above matches. Reads at most the first
// k_sniff_bytes bytes of `head`: a longer argument gives what its first k_sniff_bytes give.
// Any bytes are accepted; fewer bytes than a pattern never match it. The view is of a
// string literal: valid for the program's lifetime.
std::string_view sniff(std::string_view head);

}  // namespace dispatchd::media
