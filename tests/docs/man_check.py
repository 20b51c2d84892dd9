#!/usr/bin/env python3
"""The man pages (man/): built, clean under `man --warnings`, and holding what the code has:
dispatchd.json(5) every configuration key dispatchd accepts, dispatchctl(1) every command,
sub-command and option, dispatchd(8) dispatchd's options. The keys, commands and options
are found in the code and the built binaries the way docs_check.py finds them for docs/.

  man_check.py DISPATCHD DISPATCHCTL SOURCE_DIR MAN_DIR
Exit 0 when all hold; otherwise one line per problem and exit 1.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import docs_check  # noqa: E402

PAGES = ["dispatchd.8", "dispatchctl.1", "dispatchd.json.5", "dispatchd-catalog.5"]


def rendered(path):
    """The page as text, unhyphenated on one long line per paragraph, so a name is whole."""
    roff = subprocess.run(["nroff", "-man", "-rHY=0", "-rLL=4000n", path], capture_output=True, check=True).stdout
    return subprocess.run(["col", "-b"], input=roff, capture_output=True, check=True).stdout.decode()


def main():
    dispatchd, dispatchctl, source, man_dir = sys.argv[1:5]
    problems = []
    text = {}
    for page in PAGES:
        path = os.path.join(man_dir, page)
        if not os.path.exists(path):
            problems.append(f"{page}: not built (is scdoc installed? scripts/install-deps.sh)")
            continue
        warned = subprocess.run(["man", "--warnings", "-E", "UTF-8", "-l", path], capture_output=True, text=True,
                                env=dict(os.environ, MANWIDTH="80", MANPAGER="cat", PAGER="cat"))
        if warned.returncode != 0 or warned.stderr.strip():
            problems.append(f"{page}: man --warnings: {warned.stderr.strip() or warned.returncode}")
        text[page] = rendered(path)
    if "dispatchd.json.5" in text:
        leaves, _ = docs_check.config_keys(dispatchd)
        for key in sorted(leaves):
            if not re.search(r"(?<![\w.])" + re.escape(key) + r"(?![\w])", text["dispatchd.json.5"]):
                problems.append(f"dispatchd.json.5: the key {key} is missing")
    if "dispatchctl.1" in text and "dispatchd.8" in text:
        commands, subcommands, options = docs_check.cli_surface(source)
        daemon_options = set(re.findall(r'"--([a-z][a-z-]*)"', docs_check.read(os.path.join(source, "daemon",
                                                                                           "main.cpp"))))
        ctl_options = options - daemon_options | {"version", "help"}
        for what in docs_check.missing_cli(text["dispatchctl.1"], commands, subcommands, ctl_options):
            problems.append(f"dispatchctl.1: {what} is missing")
        for what in docs_check.missing_cli(text["dispatchd.8"], [], [], daemon_options | {"version", "help"}):
            problems.append(f"dispatchd.8: {what} is missing")
    if "dispatchd-catalog.5" in text and "send_message" not in text["dispatchd-catalog.5"]:
        problems.append("dispatchd-catalog.5: the catalog reference is missing")
    for line in problems:
        print(line)
    print(f"man_check: {len(PAGES)} pages, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
