#pragma once
// Downloading a customer's file from the Cloud API (WhatsAppChannel::fetch_media): look the
// media id up (graph.h's build_media_lookup: its short-lived URL, declared type, size and
// sha256; media_info.h reads the answer), then GET that URL with the same token, streaming
// the bytes to the receiver. Media ids expire (about 30 days) and so do the URLs (minutes):
// a URL that answers 401, 403, 404 or 410 is looked up again on the next attempt.
//
//   lookup answer                                     the fetch
//   transport error, 429, 5xx, auth (token refused)   retry (Retry-After kept)
//   404, or Graph code 100 (no such object)           expired
//   other 4xx                                         refused
//   2xx unreadable                                    retry; a URL the token may not go to: refused
//   2xx with file_size over max_bytes                 too_large, nothing downloaded
//   download answer
//   2xx, every byte received                          complete (the lookup's mime_type)
//   the receiver stopped                              stopped
//   past max_bytes                                    too_large
//   401, 403, 404, 410                                retry ("download URL expired")
//   transport error, other status                     retry

#include <chrono>
#include <memory>
#include <optional>
#include <string_view>

#include "connectors/channel.h"
#include "connectors/whatsapp/graph.h"
#include "net/http.h"

namespace dispatchd::whatsapp {

// What a non-2xx lookup answer means (the table above).
connectors::MediaFetchResult lookup_failure(int status, std::string_view body,
                                            std::optional<std::chrono::seconds> retry_after);

// What a download that ended with `status` (its bytes passed on, or not) means, the
// receiver not having stopped it.
connectors::MediaFetchResult download_result(int status, std::string_view mime_type);

// Runs one fetch over `transport`; `done` gets the outcome once, from the transport's
// callback (a request that cannot be built: through `post`), unless `alive` has expired by
// then (the channel is gone: both are dropped).
void fetch_media(net::Transport& transport, const connectors::Post& post, const GraphAccount& account,
                 const connectors::MediaFetch& fetch, connectors::MediaChunk chunk, connectors::MediaFetchDone done,
                 std::weak_ptr<void> alive);

}  // namespace dispatchd::whatsapp
