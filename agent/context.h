#pragma once
// The model's context for one message, built from values (pure): the system text, then one
// user turn with the conversation so far and the inbound message, then the tool exchanges
// of this message, then at most one failed pair (the previous raw output and the
// validator's feedback; with no output, the feedback is added to the last user turn). The
// context does not grow with each re-ask: only the last failed pair is kept, and the
// original message always stays in.

#include <optional>
#include <string>
#include <vector>

#include "common/reply_window.h"
#include "llm/provider.h"
#include "llm/providers.h"
#include "store/inbox.h"
#include "store/media.h"

namespace dispatchd::agent {

struct Inbound {
  std::string channel;       // "whatsapp" | "gmail"
  std::string sender;        // the counterpart: the only allowed recipient
  std::string text;          // the message; a turn's messages, each on its own line (turn_text)
  std::size_t messages = 1;  // how many messages `text` holds
  // The counterpart's reply window when the channel has one: a line before the message
  // says whether it is open and until when (window_line).
  std::optional<ReplyWindow> window = std::nullopt;
  // What the model is told of the turn's files (MediaChoice::lines), after the message.
  std::vector<std::string> media_lines = {};
};

// Which of a turn's files (its messages' media rows, in order) go to the model with it, and
// what the model is told about each (pure). A file goes when it is stored, is an image, a
// document or audio, and every provider a call may go to reads its content type within its
// size limits (llm::media_support); until the files so far fill the smallest request limit.
// Its content type is the sniffed one (what the bytes are), else the declared one. Every
// other file gets one line saying what is missing and why: not kept (over the cap, expired,
// unfetchable, a checksum mismatch, purged, erased, not downloaded yet), or the provider
// cannot read it. Video and stickers never go. A line also says that what the files show is
// the customer's, never an instruction.
struct MediaChoice {
  struct Send {
    std::int64_t media_id = 0;
    std::string content_type;
    std::string filename;
    std::int64_t size = 0;
  };
  std::vector<Send> send;          // to read from the store and attach, in order
  std::vector<std::string> lines;  // for the model, in the files' order
};
MediaChoice choose_media(const std::vector<store::MediaRow>& files, const std::vector<llm::ProviderKind>& providers);

// What the model is told about the reply window: open until when (UTC, ISO 8601), or
// closed, so that only template actions reach the customer.
std::string window_line(const ReplyWindow& window);

// The text of a turn of several messages (store/turns.h) as the model and the validator see
// it: each message, oldest first, on a line of its own.
std::string turn_text(const store::Leased& lead);

// What an audio message's files make of the text the model reads (media.transcription):
//   files                                        kind          text / why
//   an audio file whose transcript is done       transcribed   "[voice message, transcribed]: <transcript on one
//                                                              line>" ("[audio, transcribed]" for other audio),
//                                                              then a line saying it is the customer's speech,
//                                                              untrusted; several files, one after another
//   an audio file whose transcript failed        failed        why (the message escalates undecodable)
//   an audio file still waiting for it           awaiting      (store::awaiting_transcript: not to be read yet)
//   none of these (no audio, not transcribed)    as_written    the message's own text stays
// failed wins over awaiting, awaiting over transcribed.
struct SpokenText {
  enum class Kind { as_written, transcribed, failed, awaiting } kind = Kind::as_written;
  std::string text;  // transcribed: what the model reads instead of the message's text
  std::string why;   // failed: the transcript's reason
};
SpokenText spoken_text(const std::vector<store::MediaRow>& files);

// A read-only tool call and what it returned, fed back to the model.
struct ToolExchange {
  std::string call;    // the model's validated reply that asked for the tool (compact JSON)
  std::string result;  // what the tool answered (size-capped), or why it failed
};

struct FailedPair {
  std::string output;    // the rejected raw output, as the model wrote it; empty when none came back
  std::string feedback;  // the validator's feedback text, or why the provider's answer was not used
};

// The first user turn: history, then the message (or the turn's messages) to act on.
std::string first_turn(const std::vector<store::HistoryEntry>& history, const Inbound& inbound);

// `files` go with the first user turn, the one with the message (every request carries them).
llm::CompletionRequest build_request(const std::string& system, const std::string& first,
                                     const std::vector<ToolExchange>& tools, const std::optional<FailedPair>& failed,
                                     std::shared_ptr<const llm::OutputSchema> schema,
                                     std::vector<llm::Attachment> files = {});

}  // namespace dispatchd::agent
