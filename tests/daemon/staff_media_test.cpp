// GET /api/media/{id} and the case's media (daemon/staff_api.h, staff/media_download.h):
// a kept photo inline with its type, an "image" whose bytes are SVG or HTML a download, a
// file not kept a 404 naming its state, and nothing without a credential.

#include <catch2/catch.hpp>

#include <string>

#include "store/media.h"
#include "tests/daemon/staff_api_fixture.h"

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

const std::string k_jpeg = std::string("\xFF\xD8\xFF\xE0", 4) + "JFIF photo bytes";
const std::string k_svg = "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>";

// Files of the escalation's message: each declared as `declared`, kept with `bytes` (or
// refused over_cap when `bytes` is empty). Returns their ids in order.
std::vector<std::int64_t> files(test::Api& a, const std::vector<std::pair<std::string, std::string>>& declared_bytes) {
  std::vector<store::MediaRef> refs;
  for (std::size_t i = 0; i < declared_bytes.size(); ++i)
    refs.push_back({store::MediaKind::image, "ref" + std::to_string(i), declared_bytes[i].first, "",
                    i == 0 ? "foto.jpg" : "", false});
  REQUIRE(store::insert_media(a.f.db, a.f.message_id, refs, test::k_t0));
  std::vector<std::int64_t> ids;
  for (const auto& [declared, bytes] : declared_bytes) {
    auto claimed = store::claim_media(a.f.db, "fetcher", test::k_t0, 60s);
    REQUIRE(claimed);
    REQUIRE(*claimed);
    const std::int64_t id = (*claimed)->id;
    ids.push_back(id);
    if (bytes.empty()) {
      REQUIRE(store::refuse_media(a.f.db, id, store::MediaState::over_cap, "larger than its cap", test::k_t0));
      continue;
    }
    auto writer = store::BlobWriter::begin(a.f.db, id, test::k_t0);
    REQUIRE(writer);
    REQUIRE(writer->append(bytes));
    const std::string sniffed = bytes.starts_with("<svg") ? "image/svg+xml" : "image/jpeg";
    REQUIRE(store::finish_media(a.f.db, id, *writer,
                                {std::string(64, static_cast<char>('a' + ids.size())), sniffed, sniffed != declared},
                                test::k_t0));
  }
  return ids;
}

std::string header(const daemon::Response& r, const std::string& name) {
  for (const auto& [key, value] : r.headers)
    if (key == name) return value;
  return {};
}

}  // namespace

TEST_CASE("staff media: a kept photo is served inline with its type, nosniff and a sandbox", "[media]") {
  test::Api a;
  const auto ids = files(a, {{"image/jpeg", k_jpeg}});
  const auto r = a.call("GET", "/api/media/" + std::to_string(ids[0]), {{"authorization", "Bearer " + a.ana}});
  REQUIRE(r.status == 200);
  CHECK(r.body == k_jpeg);
  CHECK(r.content_type == "image/jpeg");
  CHECK(header(r, "Content-Disposition") ==
        "inline; filename=\"media-" + std::to_string(ids[0]) + "\"; filename*=UTF-8''foto.jpg");
  CHECK(header(r, "X-Content-Type-Options") == "nosniff");
  CHECK(header(r, "Content-Security-Policy") == "default-src 'none'; sandbox");
}

TEST_CASE("staff media: an image whose bytes are SVG is a download, never shown", "[media]") {
  test::Api a;
  const auto ids = files(a, {{"image/jpeg", k_jpeg}, {"image/png", k_svg}, {"image/svg+xml", k_svg}});
  for (const auto id : {ids[1], ids[2]}) {
    INFO(id);
    const auto r = a.call("GET", "/api/media/" + std::to_string(id), {{"authorization", "Bearer " + a.ana}});
    REQUIRE(r.status == 200);
    CHECK_THAT(header(r, "Content-Disposition"), Catch::StartsWith("attachment;"));
    CHECK(header(r, "X-Content-Type-Options") == "nosniff");
  }
  // The case lists them with how the page may show each.
  const auto c =
      a.call("GET", "/api/escalations/" + std::to_string(a.f.escalation), {{"authorization", "Bearer " + a.ana}});
  REQUIRE(c.status == 200);
  CHECK_THAT(c.body, Catch::Contains(R"("media_id":)" + std::to_string(ids[0])));
  CHECK_THAT(c.body, Catch::Contains(R"("display":"image")"));
  CHECK_THAT(c.body, Catch::Contains(R"("display":"download")"));
  CHECK_THAT(c.body, Catch::Contains(R"("type_mismatch":true)"));
}

TEST_CASE("staff media: a file not kept is a 404 naming its state, and nothing without a credential", "[media]") {
  test::Api a;
  const auto ids = files(a, {{"image/jpeg", ""}});
  const auto refused = a.call("GET", "/api/media/" + std::to_string(ids[0]), {{"authorization", "Bearer " + a.ana}});
  CHECK(refused.status == 404);
  CHECK_THAT(refused.body, Catch::Contains("over_cap"));
  CHECK(a.call("GET", "/api/media/999", {{"authorization", "Bearer " + a.ana}}).status == 404);
  CHECK(a.call("GET", "/api/media/" + std::to_string(ids[0]), {}).status == 401);
  CHECK(
      a.call("GET", "/api/media/" + std::to_string(ids[0]), {{"authorization", "Bearer " + std::string(test::k_admin)}})
          .status == 403);
  CHECK(a.call("POST", "/api/media/" + std::to_string(ids[0]), {{"authorization", "Bearer " + a.ana}}).status == 405);
}

TEST_CASE("staff media: the trail lists the message's files, kept or not", "[media]") {
  test::Api a;
  const auto ids = files(a, {{"image/jpeg", k_jpeg}, {"image/png", k_svg}, {"image/jpeg", ""}});
  const auto r = a.call("GET", "/api/messages/" + std::to_string(a.f.message_id) + "/trail",
                        {{"authorization", "Bearer " + a.ana}});
  REQUIRE(r.status == 200);
  const auto json = test::parse_json(r.body);
  REQUIRE(json["media"].Size() == 3);
  const auto& photo = json["media"][0];
  CHECK(photo["media_id"].GetInt64() == ids[0]);
  CHECK(std::string(photo["kind"].GetString()) == "image");
  CHECK(std::string(photo["state"].GetString()) == "stored");
  CHECK(std::string(photo["declared_type"].GetString()) == "image/jpeg");
  CHECK(std::string(photo["sniffed_type"].GetString()) == "image/jpeg");
  CHECK(photo["size"].GetInt64() == static_cast<std::int64_t>(k_jpeg.size()));
  CHECK(std::string(photo["sha256"].GetString()).size() == 64);
  CHECK(std::string(photo["filename"].GetString()) == "foto.jpg");
  const auto& svg = json["media"][1];
  CHECK(std::string(svg["sniffed_type"].GetString()) == "image/svg+xml");
  CHECK(svg["type_mismatch"].GetBool());
  const auto& refused = json["media"][2];
  CHECK(std::string(refused["state"].GetString()) == "over_cap");
  CHECK(std::string(refused["reason"].GetString()) == "larger than its cap");
  CHECK(refused["size"].IsNull());
  CHECK(refused["sha256"].IsNull());
}

TEST_CASE("staff media: a browser's session cookie alone fetches a file, and the page may play audio", "[media]") {
  test::Api a;
  const auto ids = files(a, {{"image/jpeg", k_jpeg}});
  const auto login = test::log_in(a, "ana", a.ana);
  // What <img> and <audio> send: the cookie, no Authorization and no CSRF token (a GET).
  const auto r = a.call("GET", "/api/media/" + std::to_string(ids[0]), {{"cookie", login.cookie}});
  CHECK(r.status == 200);
  CHECK(r.body == k_jpeg);
  // The page's CSP allows media from its own origin and nothing more than before.
  const auto page = a.call("GET", "/staff/index.html", {});
  REQUIRE(page.status == 200);
  CHECK(header(page, "Content-Security-Policy") ==
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self'; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'");
}
