#!/usr/bin/env bash
# Module boundaries that the compiler and a scan can check:
#  1. an internal header (<module>/internal/) included from outside its module does not
#     build: each one refuses to compile without its module's private definition;
#  2. no public header outside common/ includes RapidJSON or SQLite, or names a sqlite3 type;
#     no public header includes libcurl (net/ and connectors/imap/ keep it in their .cpp files);
#  3. no header at all includes GMime, GLib or libxml2: they stay in connectors/email/*.cpp.
# Usage: headers_test.sh CXX SOURCE_DIR
set -euo pipefail
cxx=$1
root=$2
cd "$root"
pass=0
fail=0
check() {  # check NAME CONDITION-EXIT-CODE
  if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAILED: $1" >&2; fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mapfile -t internals < <(git ls-files '*/internal/*.h' 2>/dev/null || find . -path '*/internal/*.h' -printf '%P\n')
[ ${#internals[@]} -gt 0 ] || { echo "no internal headers found" >&2; exit 1; }
for header in "${internals[@]}"; do
  printf '#include "%s"\n' "$header" > "$tmp/outside.cpp"
  if "$cxx" -std=c++23 -fsyntax-only -I "$root" "$tmp/outside.cpp" 2> "$tmp/err"; then
    check "$header builds from outside its module" 1
  else
    grep -q "is private to" "$tmp/err"
    check "$header fails for another reason than its guard: $(head -c 300 "$tmp/err")" $?
  fi
done

mapfile -t public < <(git ls-files '*.h' | grep -vE '^(common|tests|bench)/|/internal/')
for header in "${public[@]}"; do
  ! grep -nE '#include <(rapidjson/|sqlite3\.h)|rapidjson::|struct sqlite3|sqlite3_stmt|sqlite3 ?\*' "$header"
  check "$header (a public header) exposes RapidJSON or SQLite" $?
  ! grep -nE '#include <curl/' "$header"
  check "$header (a public header) includes libcurl" $?
done

mapfile -t every < <(git ls-files '*.h')
for header in "${every[@]}"; do
  ! grep -nE '#include <(gmime/|glib|libxml/)|GMime[A-Z]|xmlNode|xmlDoc|gpointer' "$header"
  check "$header (a header) exposes GMime, GLib or libxml2" $?
done

echo "headers: ${#internals[@]} internal headers refused outside their module, ${#public[@]} public headers clean"
echo "headers: ${#every[@]} headers without GMime, GLib or libxml2 types"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
