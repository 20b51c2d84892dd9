#!/usr/bin/env python3
"""The store's layers, held by the build's link graph and the sources' includes
(store/README.md draws them):

  1. the offline tools (dispatchd_store_tools, store/tools/) are linked by dispatchctl and
     replay/ only: never by the daemon or any module it links;
  2. no file of the daemon's modules includes a store/tools/ header, directly or through
     other headers of the project;
  3. SQL text goes through the store only inside store/: no product target links the tests'
     raw SQL library (dispatchd_raw_sql), no product file includes tests/support/raw_sql.h
     and none outside store/ defines the store's private DISPATCHD_INTERNAL_STORE;
  4. no public store header includes a store internal or declares what the store keeps for
     its own files (the names store/internal/access.h's Access offers).

The product is everything outside tests/, bench/ and fuzz/. The link graph comes from
cmake/Links.cmake (build/module_links.txt: "target: every dispatchd target it links").

Usage: layers_test.py SOURCE_DIR MODULE_LINKS     the check
       layers_test.py --self-test                 each rule catches a tree that breaks it
"""
import pathlib
import re
import sys
import tempfile

TOOLS = "dispatchd_store_tools"
TOOLS_USERS = {"dispatchctl", "dispatchd_replay", TOOLS}
RAW_SQL = "dispatchd_raw_sql"
NOT_PRODUCT = ("tests", "bench", "fuzz", "build")
SOURCES = {".cpp", ".h"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def read_links(path):
    links = {}
    for line in pathlib.Path(path).read_text().splitlines():
        if ":" in line:
            target, deps = line.split(":", 1)
            links[target.strip()] = set(deps.split())
    return links


def sources(root):
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.suffix in SOURCES and rel.parts[0] not in NOT_PRODUCT and not rel.parts[0].startswith("."):
            yield rel


def module_folders(root):
    """dispatchd_* target -> its folder, from each folder's CMakeLists.txt."""
    folders = {}
    for cmake in sorted(root.rglob("CMakeLists.txt")):
        rel = cmake.parent.relative_to(root)
        if not rel.parts or rel.parts[0] in NOT_PRODUCT:
            continue  # the top level's targets are settings, not modules
        text = cmake.read_text()
        for name in re.findall(r"(?:dispatchd_module|add_library|add_executable)\(\s*(dispatch\w+)", text):
            folders[name] = rel
    return folders


def owner(rel, folders):
    """The folder of the module a file belongs to: the deepest module folder holding it."""
    best = None
    for folder in folders.values():
        if rel.parts[:len(folder.parts)] == folder.parts and (best is None or len(folder.parts) > len(best.parts)):
            best = folder
    return best


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def check(root, links):
    problems = []
    # 1. Who links the offline tools.
    for target, deps in sorted(links.items()):
        if TOOLS in deps and target not in TOOLS_USERS:
            problems.append(f"{target} links {TOOLS} (only dispatchctl and replay/ may)")
        if RAW_SQL in deps and target != RAW_SQL:
            problems.append(f"{target} links {RAW_SQL}, the tests' SQL text")
    if "dispatchd" not in links:
        problems.append("the link graph has no dispatchd executable")

    # 2. Includes of the daemon's modules, followed through the project's headers.
    folders = module_folders(root)
    daemon_modules = links.get("dispatchd", set()) | {"dispatchd"}
    daemon_folders = {folders[m] for m in daemon_modules if m in folders}
    tools_folder = folders.get(TOOLS)
    cache = {}

    def includes(rel):
        if rel not in cache:
            path = root / rel
            cache[rel] = INCLUDE.findall(strip_comments(path.read_text(errors="replace"))) if path.is_file() else []
        return cache[rel]

    all_sources = list(sources(root))
    for rel in all_sources:
        if owner(rel, folders) not in daemon_folders:
            continue
        seen, todo = set(), [(str(rel), [])]
        while todo:
            current, chain = todo.pop()
            for inc in includes(pathlib.Path(current)):
                if inc in seen:
                    continue
                seen.add(inc)
                inc_path = pathlib.Path(inc)
                if tools_folder and inc_path.parts[:len(tools_folder.parts)] == tools_folder.parts:
                    via = " via ".join(chain[::-1] + [current]) if chain else current
                    problems.append(f"{rel} (the daemon's) includes {inc} ({via})")
                elif (root / inc_path).is_file():
                    todo.append((inc, chain + [current] if current != str(rel) else []))

    # 3. SQL text outside store/.
    for rel in all_sources:
        text = strip_comments((root / rel).read_text(errors="replace"))
        if "tests/support/raw_sql.h" in INCLUDE.findall(text):
            problems.append(f"{rel} includes tests/support/raw_sql.h (SQL text is the store's)")
        if rel.parts[0] != "store" and re.search(r"#\s*define\s+DISPATCHD_INTERNAL_STORE\b", text):
            problems.append(f"{rel} defines DISPATCHD_INTERNAL_STORE")
    for cmake in sorted(root.rglob("CMakeLists.txt")):
        rel = cmake.relative_to(root)
        if rel.parts[0] in NOT_PRODUCT or rel.parts[0] == "store":
            continue
        if "DISPATCHD_INTERNAL_STORE" in cmake.read_text():
            problems.append(f"{rel} defines DISPATCHD_INTERNAL_STORE for a target outside store/")

    # 4. Public store headers.
    access = root / "store/internal/access.h"
    offered = set()
    if access.is_file():
        body = re.search(r"struct Access \{(.*?)\n\};", strip_comments(access.read_text()), re.S)
        offered = set(re.findall(r"static [^;(]*?\b(\w+)\(", body.group(1))) if body else set()
        if not offered:
            problems.append("store/internal/access.h: no struct Access with static members found")
    for rel in all_sources:
        if rel.parts[0] != "store" or rel.suffix != ".h" or "internal" in rel.parts:
            continue
        text = strip_comments((root / rel).read_text(errors="replace"))
        for inc in INCLUDE.findall(text):
            if "/internal/" in inc:
                problems.append(f"{rel} (a public store header) includes {inc}")
        for name in sorted(offered):
            if re.search(rf"(?<![\w:.>]){name}\s*\(", text):
                problems.append(f"{rel} (a public store header) declares {name}(), which is the store's own")
    return problems


def self_test():
    """Each rule against a small tree that breaks it, and the same tree mended."""
    base = {
        "store/CMakeLists.txt": "dispatchd_module(dispatchd_store database.cpp)\nadd_subdirectory(tools)\n",
        "store/tools/CMakeLists.txt": "dispatchd_module(dispatchd_store_tools backup.cpp)\n"
                                      "target_compile_definitions(dispatchd_store_tools PRIVATE "
                                      "DISPATCHD_INTERNAL_STORE)\n",
        "store/database.h": "class Database {\n public:\n  bool ping();\n};\n",
        "store/internal/access.h": "struct Access {\n  static long long query_int(Database& db);\n"
                                   "  static void attach_round(Database& db);\n};\n",
        "store/tools/backup.h": "// backup\n",
        "store/tools/backup.cpp": '#include "store/tools/backup.h"\n#include "store/internal/access.h"\n',
        "daemon/CMakeLists.txt": "dispatchd_module(dispatchd_daemon service.cpp)\n",
        "daemon/service.h": '#include "store/database.h"\n',
        "daemon/service.cpp": '#include "daemon/service.h"\n// "store/tools/backup.h" named in a comment\n',
        "cli/CMakeLists.txt": "add_executable(dispatchctl main.cpp)\n",
        "cli/main.cpp": '#include "store/tools/backup.h"\n',
        "tests/CMakeLists.txt": "target_compile_definitions(x PRIVATE DISPATCHD_INTERNAL_STORE)\n",
        "tests/a_test.cpp": '#include "tests/support/raw_sql.h"\n#include "store/tools/backup.h"\n',
    }
    links = {
        "dispatchd_store": set(),
        TOOLS: {"dispatchd_store"},
        "dispatchd_daemon": {"dispatchd_store"},
        "dispatchd": {"dispatchd_daemon", "dispatchd_store"},
        "dispatchctl": {"dispatchd_store", TOOLS},
    }
    cases = [
        ("the daemon links the tools", {}, {"dispatchd": {"dispatchd_daemon", "dispatchd_store", TOOLS}},
         "dispatchd links dispatchd_store_tools"),
        ("a daemon module links the tools", {}, {"dispatchd_daemon": {"dispatchd_store", TOOLS}},
         "dispatchd_daemon links dispatchd_store_tools"),
        ("a product target links the raw SQL", {}, {"dispatchd_daemon": {"dispatchd_store", RAW_SQL}},
         "links dispatchd_raw_sql"),
        ("the daemon includes a tool", {"daemon/service.cpp": '#include "store/tools/backup.h"\n'}, {},
         "daemon/service.cpp (the daemon's) includes store/tools/backup.h"),
        ("the daemon includes a tool through a header",
         {"daemon/service.h": '#include "store/database.h"\n#include "store/tools/backup.h"\n'}, {},
         "includes store/tools/backup.h (daemon/service.h)"),
        ("product code includes the raw SQL", {"daemon/service.cpp": '#include "tests/support/raw_sql.h"\n'}, {},
         "daemon/service.cpp includes tests/support/raw_sql.h"),
        ("product code defines the store's private definition",
         {"cli/main.cpp": "#define DISPATCHD_INTERNAL_STORE\n"}, {}, "cli/main.cpp defines DISPATCHD_INTERNAL_STORE"),
        ("a product target gets the store's private definition",
         {"cli/CMakeLists.txt": "add_executable(dispatchctl main.cpp)\n"
                                "target_compile_definitions(dispatchctl PRIVATE DISPATCHD_INTERNAL_STORE)\n"}, {},
         "cli/CMakeLists.txt defines DISPATCHD_INTERNAL_STORE"),
        ("a public store header declares an internal",
         {"store/database.h": "class Database {\n public:\n  long long query_int(const char* sql);\n};\n"}, {},
         "store/database.h (a public store header) declares query_int()"),
        ("a public store header includes an internal", {"store/database.h": '#include "store/internal/access.h"\n'},
         {}, "store/database.h (a public store header) includes store/internal/access.h"),
    ]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        def tree(files):
            root = pathlib.Path(tmp) / f"t{tree.n}"
            tree.n += 1
            for name, text in files.items():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).write_text(text)
            return root
        tree.n = 0
        clean = check(tree(base), links)
        if clean:
            failed += 1
            print(f"FAILED: the mended tree has problems: {clean}")
        for name, files, link_changes, expected in cases:
            problems = check(tree({**base, **files}), {**links, **link_changes})
            if not any(expected in p for p in problems):
                failed += 1
                print(f"FAILED: {name}: expected a problem with {expected!r}, got {problems}")
            else:
                print(f"ok: {name}")
    print(f"{len(cases) + 1 - failed} passed, {failed} failed")
    return 1 if failed else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root, links_file = pathlib.Path(sys.argv[1]), sys.argv[2]
    problems = check(root, read_links(links_file))
    for p in problems:
        print(f"FAILED: {p}")
    links = read_links(links_file)
    print(f"layers: {len(links)} targets' links and {sum(1 for _ in sources(root))} product files checked, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
