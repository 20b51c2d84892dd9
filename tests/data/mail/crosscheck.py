#!/usr/bin/env python3
"""Cross-checks the corpus' expected values with an independent parser: Python's `email`
package (policy=default, get_body). For every message with an exact expected `text`, Python's
subject must equal the expected subject and its plain-text body must start with the expected
text (ours trims quoted history). Exits 1 when a message differs that is not listed below
with the reason Python reads it otherwise. Usage: crosscheck.py [CORPUS_DIR]
"""
import email
import email.policy
import json
import os
import sys

# Where dispatchd deliberately does more than Python's email package.
KNOWN = {
    "charset_undeclared_8bit.eml": "undeclared 8-bit text read as windows-1252 (Python: replacement characters)",
    "charset_unknown.eml": "unknown charset read best-effort (Python: LookupError)",
    "forward_rfc822_only.eml": "a forward with no text of its own shows the forwarded text (Python: no body)",
    "html_gmail_quote.eml": "HTML-only mail reduced to text (Python: no text/plain body)",
    "html_only.eml": "HTML-only mail reduced to text (Python: no text/plain body)",
    "raw_8bit_headers_latin1.eml": "raw Latin-1 header bytes read as windows-1252 (Python: replacement characters)",
}


def python_view(raw):
    message = email.message_from_bytes(raw, policy=email.policy.default)
    body = message.get_body(("plain",))
    text = body.get_content().replace("\r\n", "\n").strip() if body else ""
    return str(message["subject"] or ""), text


def main():
    corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    unexpected, agree = [], 0
    for name in sorted(os.listdir(corpus)):
        if not name.endswith(".eml"):
            continue
        with open(os.path.join(corpus, name[:-4] + ".expected.json"), encoding="utf-8") as f:
            expected = json.load(f)
        if "text" not in expected:
            continue
        with open(os.path.join(corpus, name), "rb") as f:
            raw = f.read()
        try:
            subject, text = python_view(raw)
            same = subject == expected.get("subject", subject) and text.startswith(expected["text"])
        except Exception:  # Python's parser gave up: a difference like any other
            same = False
        if same:
            agree += 1
        elif name not in KNOWN:
            unexpected.append(name)
    print(f"{agree} messages read alike by Python's email package, {len(KNOWN)} known differences")
    for name in unexpected:
        print(f"DIFFERS: {name}")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
