#pragma once
#ifndef DISPATCHD_INTERNAL_WEB
#error "web/internal/ is private to web/: include web/assets.h instead"
#endif
// Internal: the table that web/embed.cmake generates from web/staff/ at build time.

#include <span>
#include <string_view>

namespace dispatchd::web::internal {

struct EmbeddedFile {
  std::string_view name;  // the file's name in web/staff/, e.g. "app.js"
  std::string_view body;  // its bytes, exactly
};

// Every file of the page, in the order CMake lists them.
std::span<const EmbeddedFile> staff_files();

}  // namespace dispatchd::web::internal
