#!/usr/bin/env python3
"""No code outside store/ compares a stored state to a string literal: states, outcomes,
verdicts, statuses, reasons, decision kinds, audit event kinds, resolutions and hand-over
rules are store/states.h's enums (or a module's own enum), compared as enums; their text is
the store's business (to_sql / from_sql).

Flagged, in the C++ of every folder but store/, tests/, bench/ and fuzz/: a comparison
(== or !=) between a string literal and a name or member called state, outcome, verdict,
status, reason, kind, event, change, resolution or rule, or an element of a metric's `labels`, in either order, and a search
for a literal by such a member (std::ranges::find(rows, "sent", &Row::status)). Parsing a
provider's wire text into an enum is done with from_sql (or a table), never by comparing a
member named so; comments and the literals inside other strings are not code.

Usage: state_literals_test.py SOURCE_DIR     the check
       state_literals_test.py --self-test    the pattern against lines that break the rule
"""
import pathlib
import re
import sys

EXCLUDED = ("store", "tests", "bench", "fuzz", "build")
NAMES = r"(?:state|outcome|verdict|status|reason|kind|event|change|resolution|rule|labels\s*\[\s*\d+\s*\])"
OPERAND = rf"(?:[\w\]\)]+\s*(?:\.|->)\s*)*{NAMES}(?:\s*\(\s*\))?"
LITERAL = r'"(?:[^"\\]|\\.)*"'
COMPARISON = re.compile(rf"(?<![\w.>]){OPERAND}\s*[!=]=\s*{LITERAL}|{LITERAL}\s*[!=]=\s*{OPERAND}(?![\w(])"
                        rf"|{LITERAL}\s*,\s*&[\w:]+::{NAMES}\b")


def code_lines(text):
    """Each line with its comments removed (string literals kept)."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    for line in text.splitlines():
        out, i, in_string = [], 0, False
        while i < len(line):
            c = line[i]
            if not in_string and line.startswith("//", i):
                break
            if c == '"' and (i == 0 or line[i - 1] != "\\"):
                in_string = not in_string
            out.append(c)
            i += 1
        yield "".join(out)


def problems_in(text):
    return [(n, line.strip()) for n, line in enumerate(code_lines(text), 1) if COMPARISON.search(line)]


def check(root):
    found = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.suffix not in {".cpp", ".h"} or rel.parts[0] in EXCLUDED or rel.parts[0].startswith("."):
            continue
        for n, line in problems_in(path.read_text(errors="replace")):
            found.append(f"{rel}:{n}: {line}")
    return found


BAD = [
    'if (a.row.status == "sent") f.sent.push_back(a.row.id);',
    'bool took(const std::string& verdict) { return verdict == "valid" || verdict == "review"; }',
    'if (outcome == "pending") out += " (state " + t.message.state + ")";',
    'if (c.labels[1] != "pending")',
    'if ("open" == row.status) return;',
    'mark("must_escalate", got.kind == "escalate");',
    'const bool final = status == "sent" || status == "failed";',
    'if (item->status() == "claimed") return;',
    'const auto p = std::ranges::find(item->actions, "proposed", &store::ActionRow::status);',
    'if (row.event == "staff_note") notes.push_back(row);',
    'if (e.resolution == "approved") ++approved;',
    'const bool created = event.change == "escalation";',
    'if (h.rule != "holder") out += " by rule";',
]
GOOD = [
    'if (a.row.status == store::ActionStatus::sent) f.sent.push_back(a.row.id);',
    'out.field("status", store::to_sql(a.status));',
    '// a comment: status == "sent" is how it was written before',
    'line(out, "status == \\"sent\\" in a string");',
    'const auto status = store::from_sql<store::ActionStatus>(text);',
    'if (response.status_code == 200) return;',
    'if (name == "status") return;',
    'if (row.kind == store::AuditKind::staff_note) notes.push_back(row);',
]


def self_test():
    failed = 0
    for line in BAD:
        if not problems_in(line):
            failed += 1
            print(f"FAILED: not caught: {line}")
    for line in GOOD:
        if problems_in(line):
            failed += 1
            print(f"FAILED: caught, but fine: {line}")
    print(f"{len(BAD) + len(GOOD) - failed} passed, {failed} failed")
    return 1 if failed else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    found = check(pathlib.Path(sys.argv[1]))
    for f in found:
        print(f"FAILED: {f}")
    print(f"state literals: {len(found)} comparisons of a state to a string literal outside store/")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
