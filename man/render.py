#!/usr/bin/env python3
"""Writes a man page's scdoc source from its template and the user docs, so that a fact
lives in one place (docs/) and the man pages follow it.

  render.py TEMPLATE OUTPUT SOURCE_DIR VERSION

The template is scdoc with two substitutions: @VERSION@, and a line
`@INCLUDE docs/FILE.md[#HEADING]@`, replaced by that document (or the section under the
heading whose text is HEADING, up to the next heading of its level or above) converted to
scdoc: the section's own heading is left out, its subsections become `##` subsections and
deeper headings bold paragraphs; tables become one entry per row (the first cell in bold,
then the other cells named by their column); links keep their text; code spans are bold.
"""
import re
import sys


def escape(text):
    """Plain text for scdoc: its markup characters taken literally."""
    return re.sub(r"([\\*_])", r"\\\1", text)


def inline(text):
    """A line of Markdown inline markup as scdoc."""
    out, pos = [], 0
    pattern = re.compile(r"(`+) ?(.+?) ?\1(?!`)|\*\*(.+?)\*\*|\[([^\]]+)\]\([^)]*\)|(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])")
    for m in pattern.finditer(text):
        out.append(escape(text[pos:m.start()]))
        if m.group(1) is not None:
            out.append("*" + escape(m.group(2)).replace("`", "\\`") + "*")
        elif m.group(3) is not None:
            out.append(bold(inline(m.group(3))))
        elif m.group(4) is not None:
            out.append(inline(m.group(4)))
        else:
            out.append("_" + escape(m.group(5)) + "_")
        pos = m.end()
    out.append(escape(text[pos:]))
    return "".join(out)


def bold(text):
    """scdoc text in bold, once: a cell that is one code span is bold already."""
    if re.fullmatch(r"\*(?:[^*\\]|\\.)*\*", text):
        return text
    return "*" + text + "*" if "*" not in text.replace("\\*", "") else text


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def section(lines, heading):
    """The lines under the heading whose text is `heading`, and that heading's level."""
    for i, line in enumerate(lines):
        m = re.match(r"^(#+) (.*)$", line)
        if m and m.group(2).strip() == heading:
            level = len(m.group(1))
            end = len(lines)
            for j in range(i + 1, len(lines)):
                n = re.match(r"^(#+) ", lines[j])
                if n and len(n.group(1)) <= level:
                    end = j
                    break
            return lines[i + 1:end], level
    raise SystemExit(f"render.py: no heading '{heading}'")


def convert(lines, level):
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            indent = len(line) - len(line.lstrip())
            out.append("```")
            i += 1
            while i < len(lines) and not lines[i].lstrip().startswith("```"):
                out.append(lines[i][indent:].replace("\\", "\\\\").replace("`", "\\`"))
                i += 1
            out.append("```")
            i += 1
            continue
        m = re.match(r"^(#+) (.*)$", line)
        if m:
            depth = len(m.group(1)) - level
            text = inline(m.group(2))
            out += ["", ("## " + text) if depth == 1 else bold(text), ""]
            i += 1
            continue
        if line.startswith("|"):
            header = cells(line)
            i += 2  # the header and its |---| line
            while i < len(lines) and lines[i].startswith("|"):
                row = cells(lines[i])
                out += ["", bold(inline(row[0]))]
                rest = [f"{inline(header[k])}: {inline(row[k])}" if header[k] not in ("meaning", "") else inline(row[k])
                        for k in range(1, min(len(row), len(header))) if row[k]]
                if rest:
                    out.append("\t" + ". ".join(r.rstrip(".") for r in rest) + ".")
                i += 1
            out.append("")
            continue
        m = re.match(r"^(\s*)([-*]|\d+\.) (.*)$", line)
        if m:
            depth = len(m.group(1)) // 2
            mark = "-" if m.group(2) in ("-", "*") else "."
            out.append("\t" * depth + mark + " " + inline(m.group(3)))
            i += 1
            while i < len(lines) and lines[i].strip() and re.match(r"^\s{2,}\S", lines[i]) and \
                    not re.match(r"^\s*([-*]|\d+\.) ", lines[i]):
                out.append("\t" * depth + "  " + inline(lines[i].strip()))
                i += 1
            continue
        if line.startswith(">"):
            out.append("\t" + inline(line.lstrip("> ").rstrip()))
            i += 1
            continue
        out.append(inline(line.strip()) if line.strip() else "")
        i += 1
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n")


def main():
    template, output, source, version = sys.argv[1:5]
    with open(template, encoding="utf-8") as f:
        page = f.read().replace("@VERSION@", version)

    def include(m):
        path, _, heading = m.group(1).partition("#")
        with open(f"{source}/{path}", encoding="utf-8") as f:
            lines = f.read().split("\n")
        if heading:
            body, level = section(lines, heading)
        else:
            body, level = lines[1:], 1  # the document, without its title
        return convert(body, level)

    page = re.sub(r"(?m)^@INCLUDE (\S+)@$", include, page)
    with open(output, "w", encoding="utf-8") as f:
        f.write(page)


if __name__ == "__main__":
    main()
