#include "connectors/whatsapp/media_fetch.h"

#include <utility>

#include "common/handler_timing.h"
#include "connectors/whatsapp/media_info.h"
#include "net/retry_after.h"

namespace dispatchd::whatsapp {
namespace {

using connectors::MediaFetchResult;
using connectors::MediaFetchStatus;

// The Graph error code for an object that does not exist (an expired or unknown media id).
constexpr std::int64_t k_no_such_object = 100;
constexpr std::chrono::milliseconds k_lookup_timeout{15'000};

bool ok_status(int status) { return status >= 200 && status < 300; }

MediaFetchResult ended(MediaFetchStatus status, std::string why, std::chrono::milliseconds after = {}) {
  return MediaFetchResult{status, std::move(why), after, {}, {}};
}

MediaFetchResult transport_failure(const net::TransportError& error, bool downloading) {
  if (error.kind == net::TransportErrorKind::too_large && downloading)
    return ended(MediaFetchStatus::too_large, "the download passed the cap");
  return ended(MediaFetchStatus::retry, std::string(downloading ? "download: " : "lookup: ") +
                                            std::string(net::to_string(error.kind)) + ": " + error.message);
}

// One fetch in flight: the lookup, then the download.
struct Fetch : std::enable_shared_from_this<Fetch> {
  net::Transport& transport;
  GraphAccount account;
  connectors::MediaFetch fetch;
  connectors::MediaChunk chunk;
  connectors::MediaFetchDone done;
  std::weak_ptr<void> alive;
  std::chrono::steady_clock::time_point deadline;
  bool stopped = false;  // the receiver said stop

  Fetch(net::Transport& t, GraphAccount a, connectors::MediaFetch f, connectors::MediaChunk c,
        connectors::MediaFetchDone d, std::weak_ptr<void> w)
      : transport(t),
        account(std::move(a)),
        fetch(std::move(f)),
        chunk(std::move(c)),
        done(std::move(d)),
        alive(std::move(w)),
        deadline(std::chrono::steady_clock::now() + fetch.timeout) {}

  void finish(MediaFetchResult result) {
    if (alive.expired()) return;
    done(std::move(result));
  }

  void lookup(net::HttpRequest request) {
    request.timeout = std::min(k_lookup_timeout, fetch.timeout);
    transport.send(std::move(request), common::named_step([self = shared_from_this()](net::HttpResult result) {
                     self->looked_up(std::move(result));
                   }));
  }

  void looked_up(net::HttpResult result) {
    if (!result) return finish(transport_failure(result.error(), false));
    if (!ok_status(result->status)) {
      return finish(lookup_failure(result->status, result->body,
                                   net::retry_after_seconds(result->headers, std::chrono::system_clock::now())));
    }
    auto info = parse_media_info(result->body, account.graph_base_url);
    if (!info) {
      const auto status =
          info.error().code == MediaInfoErrorCode::bad_url ? MediaFetchStatus::refused : MediaFetchStatus::retry;
      return finish(ended(status, "lookup: " + info.error().message));
    }
    if (info->file_size && *info->file_size > fetch.max_bytes) {
      return finish(ended(MediaFetchStatus::too_large, "Graph states " + std::to_string(*info->file_size) +
                                                           " bytes, over the cap of " +
                                                           std::to_string(fetch.max_bytes)));
    }
    download(std::move(*info));
  }

  void download(MediaInfo info) {
    auto request = build_media_download(account, info.url);
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    request.timeout = std::max(left, std::chrono::milliseconds(1000));
    // One byte past the cap is enough to know the file is over it.
    request.max_response_bytes = static_cast<std::size_t>(fetch.max_bytes) + 1;
    request.on_body = [weak = weak_from_this()](const net::HttpResponse& head, std::string_view bytes) {
      auto self = weak.lock();
      if (!self || self->alive.expired()) return false;
      if (!ok_status(head.status)) return true;  // an error page: not the file
      if (!self->chunk(bytes)) {
        self->stopped = true;
        return false;
      }
      return true;
    };
    transport.send(std::move(request), common::named_step([self = shared_from_this(), type = std::move(info.mime_type),
                                                           sha256 = std::move(info.sha256)](net::HttpResult r) {
                     if (self->stopped) return self->finish(ended(MediaFetchStatus::stopped, "the receiver stopped"));
                     if (!r) return self->finish(transport_failure(r.error(), true));
                     auto result = download_result(r->status, type);
                     if (result.status == MediaFetchStatus::complete) result.sha256 = sha256;
                     self->finish(std::move(result));
                   }));
  }
};

}  // namespace

MediaFetchResult lookup_failure(int status, std::string_view body, std::optional<std::chrono::seconds> retry_after) {
  const SendFailure failure = read_failure(status, body, retry_after);
  const std::string why = "lookup: " + describe(failure.error);
  if (status == 404 || failure.error.code == k_no_such_object) return ended(MediaFetchStatus::expired, why);
  switch (failure.kind) {
    case ErrorClass::retry:
    case ErrorClass::auth:
    case ErrorClass::unknown:
      return ended(MediaFetchStatus::retry, why,
                   failure.retry_after ? std::chrono::milliseconds(*failure.retry_after) : std::chrono::milliseconds{});
    case ErrorClass::window_closed:
    case ErrorClass::permanent: break;
  }
  return ended(MediaFetchStatus::refused, why);
}

MediaFetchResult download_result(int status, std::string_view mime_type) {
  if (ok_status(status)) return MediaFetchResult{MediaFetchStatus::complete, {}, {}, std::string(mime_type), {}};
  if (status == 401 || status == 403 || status == 404 || status == 410)
    return ended(MediaFetchStatus::retry, "download URL expired (http " + std::to_string(status) + ")");
  return ended(MediaFetchStatus::retry, "download: http " + std::to_string(status));
}

void fetch_media(net::Transport& transport, const connectors::Post& post, const GraphAccount& account,
                 const connectors::MediaFetch& fetch, connectors::MediaChunk chunk, connectors::MediaFetchDone done,
                 std::weak_ptr<void> alive) {
  auto request = build_media_lookup(account, fetch.provider_ref);
  if (!request) {
    post(common::named_step([done = std::move(done), alive, why = request.error()]() mutable {
      if (!alive.expired()) done(ended(MediaFetchStatus::refused, "lookup: " + why));
    }));
    return;
  }
  auto running =
      std::make_shared<Fetch>(transport, account, fetch, std::move(chunk), std::move(done), std::move(alive));
  running->lookup(std::move(*request));
}

}  // namespace dispatchd::whatsapp
