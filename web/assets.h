#pragma once
// The staff page's files (web/staff/), embedded in the binary at build time so that
// dispatchd stays one file and serves the page without anything installed beside it.
//
// staff_asset(path) takes the request path as the client sent it, without the query:
//   "/staff/"          -> index.html
//   "/staff/app.js"    -> the file web/staff/app.js (likewise every other embedded file)
//   "/staff", any other path, a path with "..", "//" or a query -> std::nullopt (the
//   caller answers 404, or redirects "/staff" to "/staff/")
// The views point into static storage: valid for the whole program, safe from any thread.
// The caller adds the headers (Content-Security-Policy, caching): this module only knows
// the bytes and their media type.

#include <optional>
#include <string_view>

namespace dispatchd::web {

struct Asset {
  std::string_view content_type;  // e.g. "text/javascript; charset=utf-8"
  std::string_view body;
};

std::optional<Asset> staff_asset(std::string_view path);

}  // namespace dispatchd::web
