// HTML mail reduced to text with libxml2, and the UTF-8 helpers the decoder's text goes through.
#include <libxml/HTMLparser.h>
#include <libxml/tree.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>

#include "common/utf8.h"
#include "connectors/email/internal/text.h"

namespace dispatchd::email::detail {
namespace {

struct DocFree {
  void operator()(xmlDoc* doc) const { xmlFreeDoc(doc); }
};

std::string_view name_of(const xmlNode* node) {
  return node->name ? std::string_view(reinterpret_cast<const char*>(node->name)) : std::string_view();
}

bool is_one_of(std::string_view name, std::initializer_list<std::string_view> names) {
  for (const auto n : names)
    if (name == n) return true;
  return false;
}

// Elements whose content is never text a person reads in the mail.
bool is_dropped(std::string_view name) {
  return is_one_of(name, {"script", "style", "head", "title", "template", "noscript", "object", "svg"});
}

// Line breaks around block elements: paragraph-like ones stand apart by a blank line, the
// others (div, li, tr, ...) start a new line.
int block_breaks(std::string_view name) {
  if (is_one_of(name, {"p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "table", "blockquote", "pre", "hr", "dl"}))
    return 2;
  if (is_one_of(name, {"div", "li", "tr", "section", "article", "header", "footer", "address", "dt", "dd", "center",
                       "form", "fieldset", "body", "html", "caption"}))
    return 1;
  return 0;
}

std::string attribute(const xmlNode* node, const char* name) {
  xmlChar* value = xmlGetProp(node, reinterpret_cast<const xmlChar*>(name));
  if (!value) return {};
  std::string out(reinterpret_cast<const char*>(value));
  xmlFree(value);
  return out;
}

// Where a reply's quoted history starts in HTML mail: Gmail's quote and the blockquotes most
// clients wrap the original in; Outlook's separator div, after which everything is the original.
enum class Quote { none, subtree, rest };

Quote quote_kind(const xmlNode* node, std::string_view name) {
  if (name == "blockquote") return Quote::subtree;
  if (name != "div") return Quote::none;
  const std::string cls = attribute(node, "class");
  if (cls.find("gmail_quote") != std::string::npos) return Quote::subtree;
  const std::string id = attribute(node, "id");
  if (id == "divRplyFwdMsg" || id == "appendonsend") return Quote::rest;
  return Quote::none;
}

// Two texts built by one walk: `full` takes everything, `trimmed` skips quotes. Line breaks
// are held back until text follows, so that nested blocks give one break, not a stack of them.
class TextBuilder {
 public:
  void text(std::string_view s, bool quoted, bool pre) {
    std::string out;
    out.reserve(s.size());
    for (const char c : s) {
      const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
      if (pre || !space) {
        out.push_back(c);
      } else if (out.empty() ? !at_blank(quoted) : out.back() != ' ') {
        out.push_back(' ');
      }
    }
    if (out.empty()) return;
    m_full.flush(out);
    if (!quoted) m_trimmed.flush(out);
  }
  // At least `breaks` line breaks (1: new line, 2: blank line) before the next text.
  void block(int breaks, bool quoted) {
    m_full.block(breaks);
    if (!quoted) m_trimmed.block(breaks);
  }
  // <br>: one more line break, however many are pending.
  void line_break(bool quoted) {
    m_full.line_break();
    if (!quoted) m_trimmed.line_break();
  }
  BodyText finish() { return {tidy_lines(m_full.text), tidy_lines(m_trimmed.text)}; }

 private:
  struct Out {
    std::string text;
    int pending = 0;
    void block(int breaks) { pending = std::max(pending, breaks); }
    void line_break() { pending = std::min(pending + 1, 2); }
    void flush(std::string_view s) {
      if (!text.empty()) text.append(static_cast<std::size_t>(pending), '\n');
      pending = 0;
      text.append(s);
    }
    bool at_blank() const { return text.empty() || pending > 0 || text.back() == ' ' || text.back() == '\n'; }
  };
  bool at_blank(bool quoted) const { return quoted ? m_full.at_blank() : m_trimmed.at_blank(); }
  Out m_full, m_trimmed;
};

// Walks the tree with parent/next pointers (no recursion, whatever the nesting). `enter` says
// whether to descend; `leave` runs once for every node entered.
template <typename Enter, typename Leave>
void walk(xmlNode* first, Enter enter, Leave leave) {
  xmlNode* node = first;
  while (node) {
    if (enter(node) && node->children) {
      node = node->children;
      continue;
    }
    while (node) {
      leave(node);
      if (node->next) {
        node = node->next;
        break;
      }
      node = node->parent;
      if (node == nullptr || node->type == XML_DOCUMENT_NODE || node->type == XML_HTML_DOCUMENT_NODE) node = nullptr;
    }
  }
}

}  // namespace

BodyText html_to_text(std::string_view html) {
  if (html.empty() || html.size() > static_cast<std::size_t>(INT_MAX)) return {};
  const int options = HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET;
  std::unique_ptr<xmlDoc, DocFree> doc(
      htmlReadMemory(html.data(), static_cast<int>(html.size()), nullptr, "UTF-8", options));
  if (!doc) return {};
  TextBuilder out;
  int quote_depth = 0;  // open quote subtrees
  bool rest_quoted = false;
  int pre_depth = 0;
  const auto quoted = [&] { return quote_depth > 0 || rest_quoted; };
  const auto enter = [&](xmlNode* node) {
    if (node->type == XML_TEXT_NODE || node->type == XML_CDATA_SECTION_NODE) {
      if (node->content) out.text(reinterpret_cast<const char*>(node->content), quoted(), pre_depth > 0);
      return false;
    }
    if (node->type != XML_ELEMENT_NODE) return false;
    const std::string_view name = name_of(node);
    if (is_dropped(name)) return false;
    const Quote q = quote_kind(node, name);
    if (q == Quote::subtree) ++quote_depth;
    if (q == Quote::rest) rest_quoted = true;
    if (name == "pre") ++pre_depth;
    if (name == "br") out.line_break(quoted());
    out.block(block_breaks(name), quoted());
    if (name == "li") out.text("- ", quoted(), true);
    if (name == "td" || name == "th") out.text(" ", quoted(), false);
    return true;
  };
  const auto leave = [&](xmlNode* node) {
    if (node->type != XML_ELEMENT_NODE) return;
    const std::string_view name = name_of(node);
    if (is_dropped(name)) return;
    out.block(block_breaks(name), quoted());
    if (name == "pre") --pre_depth;
    if (quote_kind(node, name) == Quote::subtree) --quote_depth;
  };
  walk(xmlDocGetRootElement(doc.get()), enter, leave);
  return out.finish();
}

std::string valid_utf8(std::string_view bytes, std::size_t& replaced) {
  replaced = 0;
  std::string out;
  out.reserve(bytes.size());
  while (!bytes.empty()) {
    const auto bad = utf8::first_invalid(bytes);
    if (!bad) {
      out.append(bytes);
      break;
    }
    out.append(bytes.substr(0, *bad));
    out.append("\xEF\xBF\xBD");
    ++replaced;
    // Skip the lead byte and the continuation bytes that followed it.
    std::size_t skip = *bad + 1;
    while (skip < bytes.size() && (static_cast<unsigned char>(bytes[skip]) & 0xC0) == 0x80 && skip < *bad + 4) ++skip;
    bytes.remove_prefix(skip);
  }
  return out;
}

std::string_view cut_utf8(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

std::string tidy_lines(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t blank_run = 0;
  bool started = false;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    // "-- " opens a signature (RFC 3676): the one line whose trailing blank means something.
    if (line != "-- " && line != "-- \r")
      while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.remove_suffix(1);
    if (line == "-- \r") line.remove_suffix(1);
    if (line.empty()) {
      ++blank_run;
      continue;
    }
    if (started) out.append(blank_run > 0 ? "\n\n" : "\n");
    out.append(line);
    started = true;
    blank_run = 0;
  }
  return out;
}

}  // namespace dispatchd::email::detail
