#!/usr/bin/env python3
"""No channel is named outside connectors/: the parts that serve every channel (daemon/,
config/, staff/, store/, replay/, web/) read channel names from the registry
(connectors/registry.h) or from data, so that adding a channel touches its own folder, one
registration line, its docs and its tests.

A channel kind is a folder connectors/<name>/ with a section.h (its registration). Named
means the name as a whole word in code: a string ("whatsapp"), a namespace (whatsapp::), an
include (connectors/whatsapp/...), a member (config.whatsapp) or its label in a message
("WhatsApp"), in any case. Comments may name channels as examples; a longer identifier that
contains the name (a table such as whatsapp_templates, which belongs to that channel's
feature) is not the name.

Usage: channel_names_test.py SOURCE_DIR
"""
import pathlib
import re
import sys

SCANNED = ("daemon", "config", "staff", "store", "replay", "web")
SUFFIXES = {".cpp", ".h", ".js", ".mjs", ".html", ".css"}


def strip_comments(text: str, suffix: str) -> str:
    """The text with its comments blanked (lines kept), strings kept whole."""
    if suffix == ".html":
        return re.sub(r"<!--.*?-->", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("\n" * text.count("\n", i, end))
            i = end
        elif text.startswith('R"', i) and suffix in {".cpp", ".h"}:
            # A raw string: R"delim( ... )delim"
            open_paren = text.find("(", i)
            delim = text[i + 2:open_paren]
            end = text.find(")" + delim + '"', open_paren)
            end = n if end < 0 else end + len(delim) + 2
            out.append(text[i:end])
            i = end
        elif c in "\"'`" and not (c == "'" and suffix in {".cpp", ".h"} and i > 0 and text[i - 1].isalnum()):
            # A string (a C++ digit separator 1'000 is not one).
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    kinds = sorted(p.parent.name for p in (root / "connectors").glob("*/section.h"))
    if not kinds:
        print("no channel kinds found under connectors/*/section.h", file=sys.stderr)
        return 1
    pattern = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, kinds)) + r")(?![A-Za-z0-9_])",
                         re.IGNORECASE)
    files = [p for folder in SCANNED for p in sorted((root / folder).rglob("*")) if p.suffix in SUFFIXES]
    found = []
    for path in files:
        code = strip_comments(path.read_text(encoding="utf-8"), path.suffix)
        for number, line in enumerate(code.split("\n"), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    for line in found:
        print("names a channel:", line, file=sys.stderr)
    print(f"channel names: {len(kinds)} kinds ({', '.join(kinds)}), {len(files)} files in "
          f"{', '.join(SCANNED)}: {len(found)} naming one")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
