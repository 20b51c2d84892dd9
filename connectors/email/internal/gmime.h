#pragma once
#ifndef DISPATCHD_INTERNAL_CONNECTORS
#error "connectors/email/internal/ is private to connectors/: include the module's public headers instead"
#endif
// GMime's one-time set-up, shared by the decoder and the reply builder: g_mime_init() is
// not thread-safe and must run once per process, before any other GMime call.

namespace dispatchd::email::detail {

void ensure_gmime();

}  // namespace dispatchd::email::detail
