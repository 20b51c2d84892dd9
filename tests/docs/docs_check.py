#!/usr/bin/env python3
"""Keeps the user docs from rotting: what the code accepts and exposes must be documented,
and what the docs point at must exist.

  docs_check.py DISPATCHD DISPATCHCTL SOURCE_DIR            check the repository's docs
  docs_check.py DISPATCHD DISPATCHCTL SOURCE_DIR --self-test
      check that each kind of rot is caught: a copy of the docs with one key, flag,
      metric, link or version broken at a time must fail, and the unbroken copy must pass

Checks, each against the code or the built binaries, never against a list kept here:
  - every configuration key dispatchd accepts (asked of `dispatchd --check-config`, which
    names the known keys of an object when it meets an unknown one) is a first-column row
    of a table in docs/configuration.md, and every key such a row names is accepted;
  - every dispatchctl command and sub-command (cli/main.cpp: its dispatch table and usage
    text) appears as `dispatchctl COMMAND` in docs/cli.md, and every option any command
    declares (cli/*.cpp: OptionSpec) or dispatchd takes (daemon/main.cpp) as `--option`;
  - every metric family daemon/metrics.cpp renders is a first-column row of a table in
    docs/metrics.md, and every family such a row names is rendered;
  - every relative link in the user docs resolves, to a file and, with #anchor, a heading;
  - no user doc names an issue number or points outside the repository;
  - `dispatchd --version`, `dispatchctl --version` and CHANGELOG.md's newest version agree.
Exit 0 when all hold; otherwise one line per problem on stdout and exit 1.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

USER_DOCS = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md"]  # and docs/**/*.md
PROBE = "zz_docs_probe"


def user_docs(root):
    files = [f for f in USER_DOCS if os.path.exists(os.path.join(root, f))]
    for folder, _, names in os.walk(os.path.join(root, "docs")):
        files += [os.path.relpath(os.path.join(folder, n), root) for n in sorted(names) if n.endswith(".md")]
    return files


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def without_code_blocks(text):
    """The text with fenced code blocks blanked (their lines kept, so line numbers hold)."""
    out, fenced = [], False
    for line in text.split("\n"):
        if re.match(r"^\s*(```|~~~)", line):
            fenced = not fenced
            out.append("")
        else:
            out.append("" if fenced else line)
    return out


def first_column_names(text, pattern):
    """Backticked names in the first cell of the table rows of a Markdown text."""
    names = set()
    for line in without_code_blocks(text):
        m = re.match(r"^\s*\|\s*([^|]*)\|", line)
        if m:
            names.update(n for n in re.findall(r"`([^`]+)`", m.group(1)) if re.fullmatch(pattern, n))
    return names


# ---- configuration keys -------------------------------------------------------------

def config_keys(dispatchd):
    """The dotted keys dispatchd's configuration accepts, found by asking it level by level
    (an object holding an unknown key makes --check-config list the keys known there): the
    leaves (values, and maps such as llm.prices) and the objects that hold them."""
    known = {}  # JSON pointer of an object -> its keys
    frontier = [""]
    with tempfile.TemporaryDirectory() as tmp:
        while frontier:
            config = {}
            for pointer in frontier:
                node = config
                for part in [p for p in pointer.split("/") if p]:
                    node = node.setdefault(part, {})
                node[PROBE] = 1
            path = os.path.join(tmp, "probe.json")
            with open(path, "w") as f:
                json.dump(config, f)
            run = subprocess.run([dispatchd, "--check-config", "--config", path], capture_output=True, text=True,
                                 timeout=60)
            output = run.stdout + run.stderr
            found = {}  # "FILE: /llm/zz_docs_probe: unknown key (known here: a, b)"
            for m in re.finditer(r": ((?:/[^/\s:]+)*)/" + PROBE + r": unknown key \(known here: ([^)]*)\)", output):
                found[m.group(1)] = [k.strip() for k in m.group(2).split(",") if k.strip()]
            if "" in frontier and "" not in found:
                raise SystemExit("docs_check: dispatchd --check-config did not name the known keys:\n" + output)
            next_frontier = []
            for pointer in frontier:
                keys = found.get(pointer)
                if keys is None:
                    continue  # not an object of named keys (a map such as llm.prices): a leaf
                known[pointer] = keys
                next_frontier += [pointer + "/" + k for k in keys]
            frontier = next_frontier
    leaves, objects = set(), {p.strip("/").replace("/", ".") for p in known if p}
    for pointer, keys in known.items():
        for k in keys:
            child = pointer + "/" + k
            if child not in known:
                leaves.add(child.strip("/").replace("/", "."))
    return leaves, objects


def check_config(root, dispatchd, problems):
    doc = os.path.join(root, "docs", "configuration.md")
    if not os.path.exists(doc):
        problems.append("docs/configuration.md: missing")
        return
    documented = first_column_names(read(doc), r"[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)*")
    leaves, objects = config_keys(dispatchd)
    for key in sorted(leaves - documented):
        problems.append(f"docs/configuration.md: the key `{key}` is accepted by dispatchd but has no row")
    for key in sorted(k for k in documented - leaves - objects if "." in k):  # other tables' words are not keys
        problems.append(f"docs/configuration.md: a row names `{key}`, which dispatchd does not accept")


# ---- the command line -----------------------------------------------------------------

def cli_surface(source):
    main = read(os.path.join(source, "cli", "main.cpp"))
    commands = re.findall(r'\{"([a-z-]+)", dispatchd::cli::cmd_', main)
    usage = re.search(r"k_usage =(.*?);\n", main, re.S).group(1)
    usage = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', usage)).replace("\\n", "\n")
    subcommands = set()
    for line in usage.split("\n"):
        m = re.match(r"^  ([a-z][a-z-]*) ([a-z][a-z-]*)\b", line)
        if m and m.group(1) in commands:
            subcommands.add(m.group(1) + " " + m.group(2))
        for part in line.split("|"):
            m = re.match(r"^\s*(staff) ([a-z]+)\b", part)
            if m:
                subcommands.add(m.group(1) + " " + m.group(2))
    options = set()
    for name in sorted(os.listdir(os.path.join(source, "cli"))):
        if name.endswith(".cpp"):
            options.update(re.findall(r'\{"([a-z][a-z-]*)", (?:true|false)\}', read(os.path.join(source, "cli", name))))
    daemon_options = set(re.findall(r'"--([a-z][a-z-]*)"', read(os.path.join(source, "daemon", "main.cpp"))))
    return commands, subcommands, options | daemon_options | {"version", "help"}


def missing_cli(text, commands, subcommands, options):
    """What of the command line `text` does not name: "the command `dispatchctl X`", "the option `--Y`"."""
    missing = []
    for command in commands:
        if not re.search(r"dispatchctl (?:\S+ )*?" + re.escape(command) + r"(?![\w-])", text):
            missing.append(f"the command `dispatchctl {command}`")
    for sub in sorted(subcommands):
        if not re.search(r"(?<![\w-])" + re.escape(sub) + r"(?![\w-])", text):
            missing.append(f"the command `dispatchctl {sub}`")
    for option in sorted(options):
        if not re.search(r"(?<![\w-])--" + re.escape(option) + r"(?![\w-])", text):
            missing.append(f"the option `--{option}`")
    return missing


def check_cli(root, source, problems):
    doc = os.path.join(root, "docs", "cli.md")
    if not os.path.exists(doc):
        problems.append("docs/cli.md: missing")
        return
    text = read(doc)
    commands, subcommands, options = cli_surface(source)
    if not commands or not options:
        problems.append("docs_check: found no dispatchctl commands or options in cli/ (has the code moved?)")
    for what in missing_cli(text, commands, subcommands, options):
        problems.append(f"docs/cli.md: {what} is not documented")


# ---- metrics --------------------------------------------------------------------------

def metric_families(source):
    names = set(re.findall(r'"(dispatchd_[a-z0-9_]+)"', read(os.path.join(source, "daemon", "metrics.cpp"))))
    return {n for n in names if not re.search(r"_(bucket|sum|count)$", n)}


def check_metrics(root, source, problems):
    doc = os.path.join(root, "docs", "metrics.md")
    if not os.path.exists(doc):
        problems.append("docs/metrics.md: missing")
        return
    documented = {n for n in first_column_names(read(doc), r"dispatchd_[a-z0-9_]+")
                  if not re.search(r"_(bucket|sum|count)$", n)}
    rendered = metric_families(source)
    for name in sorted(rendered - documented):
        problems.append(f"docs/metrics.md: the metric `{name}` is exposed but has no row")
    for name in sorted(documented - rendered):
        problems.append(f"docs/metrics.md: a row names `{name}`, which the daemon does not expose")


# ---- links ----------------------------------------------------------------------------

def slug(heading):
    """GitHub's anchor for a heading: lower case, spaces to '-', punctuation dropped."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    for line in without_code_blocks(read(path)):
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def check_links(root, source, problems):
    for rel in user_docs(root):
        lines = without_code_blocks(read(os.path.join(root, rel)))
        for number, line in enumerate(lines, 1):
            line = re.sub(r"`[^`]*`", "", line)
            for target in re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", line):
                if re.match(r"^[a-z]+:", target):
                    continue  # http:, https:, mailto:
                where = f"{rel}:{number}"
                if "../shared" in target:
                    problems.append(f"{where}: links outside the repository: {target}")
                    continue
                path, _, anchor = target.partition("#")
                if path:
                    resolved = os.path.normpath(os.path.join(os.path.dirname(rel), path))
                    if resolved.startswith(".."):
                        problems.append(f"{where}: links outside the repository: {target}")
                        continue
                    full = os.path.join(root, resolved)
                    if not os.path.exists(full) and not os.path.exists(os.path.join(source, resolved)):
                        problems.append(f"{where}: broken link: {target} (no such file)")
                        continue
                    if not os.path.exists(full):
                        full = os.path.join(source, resolved)
                else:
                    full = os.path.join(root, rel)
                if anchor and full.endswith(".md") and anchor not in anchors(full):
                    problems.append(f"{where}: broken link: {target} (no such heading)")


# ---- history in user docs ---------------------------------------------------------------

def check_history(root, problems):
    for rel in user_docs(root):
        if rel == "CHANGELOG.md":
            continue  # history lives there
        for number, line in enumerate(read(os.path.join(root, rel)).split("\n"), 1):
            if re.search(r"\bissues?\s+#?\d+|\bpull request\s+#?\d+|\bPR\s+#?\d+", line, re.I):
                problems.append(f"{rel}:{number}: names an issue number (history goes to CHANGELOG.md)")
            if "../shared/" in line or "ARCHITECTURE.md" in line:
                problems.append(f"{rel}:{number}: points at a file outside the repository")


# ---- version ----------------------------------------------------------------------------

def check_version(root, dispatchd, dispatchctl, problems):
    path = os.path.join(root, "CHANGELOG.md")
    if not os.path.exists(path):
        problems.append("CHANGELOG.md: missing")
        return
    m = re.search(r"^## \[?(\d+\.\d+\.\d+)\]?", read(path), re.M)
    if not m:
        problems.append("CHANGELOG.md: no version heading (`## 0.x.y ...`)")
        return
    for binary, name in ((dispatchd, "dispatchd"), (dispatchctl, "dispatchctl")):
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
        if out != f"{name} {m.group(1)}":
            problems.append(f"CHANGELOG.md: its newest version is {m.group(1)}, but `{name} --version` prints {out!r}")


def check(root, source, dispatchd, dispatchctl):
    problems = []
    check_config(root, dispatchd, problems)
    check_cli(root, source, problems)
    check_metrics(root, source, problems)
    check_links(root, source, problems)
    check_history(root, problems)
    check_version(root, dispatchd, dispatchctl, problems)
    return problems


# ---- self-test: each kind of rot, once -------------------------------------------------

def copy_docs(source, into):
    for rel in user_docs(source):
        os.makedirs(os.path.dirname(os.path.join(into, rel)) or into, exist_ok=True)
        shutil.copy(os.path.join(source, rel), os.path.join(into, rel))


def drop_line(rel, needle):
    """A mutation: the first table row (or line) of `rel` that holds `needle` removed."""
    def mutate(root):
        path = os.path.join(root, rel)
        lines = read(path).split("\n")
        for i, line in enumerate(lines):
            if needle in line:
                del lines[i]
                with open(path, "w", encoding="utf-8") as f:
                    f.write("\n".join(lines))
                return
        raise SystemExit(f"self-test: {rel} has no line with {needle!r}")
    return mutate


def replace_all(rel, old, new):
    def mutate(root):
        path = os.path.join(root, rel)
        text = read(path)
        if old not in text:
            raise SystemExit(f"self-test: {rel} has no {old!r}")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new))
    return mutate


def append(rel, text):
    def mutate(root):
        with open(os.path.join(root, rel), "a", encoding="utf-8") as f:
            f.write(text)
    return mutate


def self_test(source, dispatchd, dispatchctl):
    cases = [
        ("a config key without its row", drop_line("docs/configuration.md", "`llm.max_concurrency`"),
         "`llm.max_concurrency` is accepted by dispatchd but has no row"),
        ("a row for a key the code does not accept", append("docs/configuration.md", "\n| `llm.temperature` | x |\n"),
         "names `llm.temperature`, which dispatchd does not accept"),
        ("an option nowhere in the CLI reference", replace_all("docs/cli.md", "--older-than-days", "--older-than"),
         "the option `--older-than-days` is not documented"),
        ("a command nowhere in the CLI reference", replace_all("docs/cli.md", "migrate-store", "move-store"),
         "the command `dispatchctl migrate-store` is not documented"),
        ("a metric without its row", drop_line("docs/metrics.md", "`dispatchd_reasks_total`"),
         "the metric `dispatchd_reasks_total` is exposed but has no row"),
        ("a link to a missing file", append("docs/operations.md", "\nSee [the guide](no-such-guide.md).\n"),
         "broken link: no-such-guide.md (no such file)"),
        ("a link to a missing heading", append("README.md", "\nSee [metrics](docs/metrics.md#no-such-heading).\n"),
         "broken link: docs/metrics.md#no-such-heading (no such heading)"),
        ("an issue number", append("docs/architecture.md", "\nThis came with issue 12.\n"),
         "names an issue number"),
        ("a version the binaries do not print", replace_all("CHANGELOG.md", "\n## ", "\n## 9.9.9 (unreleased)\n\n## "),
         "its newest version is 9.9.9"),
    ]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        clean = os.path.join(tmp, "clean")
        copy_docs(source, clean)
        problems = check(clean, source, dispatchd, dispatchctl)
        if problems:
            failures.append("the unbroken copy fails: " + "; ".join(problems))
        for name, mutate, expected in cases:
            root = os.path.join(tmp, re.sub(r"\W+", "-", name))
            copy_docs(source, root)
            mutate(root)
            problems = check(root, source, dispatchd, dispatchctl)
            caught = [p for p in problems if expected in p]
            print(f"{'caught' if caught else 'MISSED'}: {name}: {caught[0] if caught else problems}")
            if not caught:
                failures.append(f"{name}: expected a problem with {expected!r}, got {problems}")
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


def main():
    if len(sys.argv) not in (4, 5) or (len(sys.argv) == 5 and sys.argv[4] != "--self-test"):
        print(__doc__, file=sys.stderr)
        return 2
    dispatchd, dispatchctl, source = sys.argv[1:4]
    if len(sys.argv) == 5:
        return self_test(source, dispatchd, dispatchctl)
    problems = check(source, source, dispatchd, dispatchctl)
    for p in problems:
        print(p)
    print(f"docs: {len(problems)} problem(s)" if problems else "docs: every key, command, option, metric, link "
          "and the version are documented and resolve")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
