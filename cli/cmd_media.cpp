// dispatchctl media get: a customer's kept file written to a file (store/media.h read a chunk
// at a time, never whole in memory). Exit 0 written, 1 no such file or none kept (its state
// says why), 2 usage error or the output cannot be written.
#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/args.h"
#include "cli/target.h"
#include "staff/media_download.h"
#include "store/media.h"

namespace dispatchd::cli {
namespace {

constexpr const char* k_media_usage =
    "usage: dispatchctl [--config FILE | --db FILE] media get MEDIA_ID -o FILE\n"
    "  MEDIA_ID is media.id (the staff page's and the case's media_id); FILE is written anew\n"
    "  with the file's bytes (\"-\": standard output).";

}  // namespace

int cmd_media(int argc, char** argv) {
  // -o, as the contract spells it, is --output.
  std::vector<char*> words(argv, argv + argc);
  static char k_output[] = "--output";
  for (auto& word : words)
    if (std::string_view(word) == "-o") word = k_output;
  auto specs = target_options();
  specs.push_back({"output", true});
  auto args = parse_args(static_cast<int>(words.size()), words.data(), 2, specs);
  if (!args) return usage_error(args.error());
  if (args->positional.size() != 2 || args->positional[0] != "get") return usage_error(k_media_usage);
  const auto output = args->get("output");
  if (!output) return usage_error("give -o FILE (\"-\" for standard output)");
  const auto id = positive_id(args->positional[1]);
  if (!id) return usage_error("MEDIA_ID must be a positive whole number, not " + args->positional[1]);
  auto target = open_target(*args);
  if (!target) return usage_error(target.error());
  auto file = store::find_media(target->db, *id);
  if (!file) {
    if (file.error().kind != store::ErrorKind::not_found)
      return usage_error("cannot read the file: " + file.error().message);
    std::fprintf(stderr, "dispatchctl: no file %lld\n", static_cast<long long>(*id));
    return k_exit_rejected;
  }
  if (file->state != store::MediaState::stored) {
    std::fprintf(stderr, "dispatchctl: file %lld is %s: no bytes are kept%s%s\n", static_cast<long long>(*id),
                 std::string(store::to_sql(file->state)).c_str(), file->reason.empty() ? "" : " (",
                 file->reason.empty() ? "" : (file->reason + ")").c_str());
    return k_exit_rejected;
  }
  const bool to_stdout = *output == "-";
  std::ofstream out;
  if (!to_stdout) {
    out.open(*output, std::ios::binary | std::ios::trunc);
    if (!out) return usage_error("cannot write " + *output);
  }
  bool written = true;
  auto read = store::read_media(target->db, *id, [&](std::string_view chunk) {
    if (to_stdout) {
      written = std::fwrite(chunk.data(), 1, chunk.size(), stdout) == chunk.size();
    } else {
      out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      written = static_cast<bool>(out);
    }
    return written;
  });
  if (!read) return usage_error("cannot read the file's bytes: " + read.error().message);
  if (!to_stdout) out.close();
  if (!written || (!to_stdout && !out)) return usage_error("cannot write " + *output);
  const auto serving = staff::media_serving(*file);
  std::fprintf(stderr, "media %lld: %s, %s, %lld bytes, sha256 %s%s\n", static_cast<long long>(*id),
               std::string(store::to_sql(file->kind)).c_str(), serving.content_type.c_str(),
               static_cast<long long>(file->size.value_or(0)), file->sha256.c_str(),
               file->type_mismatch ? (", its bytes look like " + file->sniffed_type).c_str() : "");
  return k_exit_ok;
}

}  // namespace dispatchd::cli
