#!/usr/bin/env bash
# dispatchctl migrate-store, black-box: the seeded SQLite database moved into a fresh
# database on the test server (DISPATCHD_TEST_POSTGRESQL_DIR, tests/postgresql/cluster.sh);
# `audit verify` passes on the target and every table holds as many rows on both sides.
# Usage: migrate_store_test.sh DISPATCHCTL DISPATCHD_SEED SOURCE_DIR
pg=${DISPATCHD_TEST_POSTGRESQL_DIR:?DISPATCHD_TEST_POSTGRESQL_DIR is not set (tests/postgresql/cluster.sh start DIR)}
# The source is a SQLite file: seeded.sh seeds one on PostgreSQL when this is set.
unset DISPATCHD_TEST_POSTGRESQL_DIR
. "$3/tests/cli/seeded.sh"
server_uri=$(cat "$pg/uri")
export PGPASSWORD
PGPASSWORD=$(cat "$pg/password")
prefix=t_cli_move_$$
made=()
# A new empty database on the server; its URI in $uri (not a subshell: `made` must keep it).
new_db() {
  local name=${prefix}_$1
  sql dispatchd "CREATE DATABASE $name" >/dev/null || { echo "FAIL: CREATE DATABASE $name"; exit 1; }
  made+=("$name")
  uri=${server_uri%/*}/$name
}
sql() { psql -X -q -t -A -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$(cat "$pg/port")" -U dispatchd "$1" -c "$2"; }
cleanup() {
  for name in "${made[@]}"; do sql dispatchd "DROP DATABASE IF EXISTS $name WITH (FORCE)" >/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT

expect "no arguments is a usage error" 2 "usage: dispatchctl migrate-store" -- "$ctl" migrate-store
expect "--to must be a postgresql URI" 2 "postgresql:// URI" -- "$ctl" migrate-store --from "$db" --to "$tmp/x.db"
expect "a missing source is a usage error" 2 "" -- "$ctl" migrate-store --from "$tmp/missing.db" --to "$server_uri"

new_db main
target=$uri
expect "the seeded database moves" 0 "audit chain ok on both sides" -- \
  "$ctl" migrate-store --from "$db" --to "$target" --migrations "$src/migrations"
grep -qE '^migrate-store: inbox: [0-9]+ rows' "$tmp/err" && pass || fail "no progress line for inbox on stderr"
expect "audit verify passes on the target" 0 "" -- "$ctl" audit verify --db "$target"

# Every table: as many rows on both sides.
for table in $(q "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' ORDER BY name"); do
  want=$(q "SELECT count(*) FROM $table")
  got=$(sql "${target##*/}" "SELECT count(*) FROM $table")
  [ "$want" = "$got" ] && pass || fail "$table: $want rows in SQLite, $got in PostgreSQL"
done
# The chains end at the same event.
want=$(q "SELECT id || ' ' || hash FROM audit ORDER BY id DESC LIMIT 1")
got=$(sql "${target##*/}" "SELECT id || ' ' || hash FROM audit ORDER BY id DESC LIMIT 1")
[ "$want" = "$got" ] && pass || fail "audit heads differ: $want vs $got"

expect "a target that holds rows is refused" 1 "target_not_empty" -- \
  "$ctl" migrate-store --from "$db" --to "$target" --migrations "$src/migrations"
got=$(sql "${target##*/}" "SELECT count(*) FROM inbox")
[ "$got" = "$(q 'SELECT count(*) FROM inbox')" ] && pass || fail "the refused move changed the target ($got inbox rows)"

# A broken chain in the source: refused, and the target has not even a table.
cp "$db" "$tmp/broken.db"
sqlite3 "$tmp/broken.db" "DROP TRIGGER audit_no_update; UPDATE audit SET detail = '{\"x\":1}' WHERE id = 3" ||
  fail "tampering"
new_db broken
fresh=$uri
expect "a broken source chain is refused" 1 "source_chain_broken" -- \
  "$ctl" migrate-store --from "$tmp/broken.db" --to "$fresh" --migrations "$src/migrations"
got=$(sql "${fresh##*/}" "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'")
[ "$got" = 0 ] && pass || fail "the refused move left $got tables in the target"

# No password: the connection is refused, and nothing names a password.
new_db nopass
other=$uri
expect "no password: refused" 1 "" -- env -u PGPASSWORD "$ctl" migrate-store --from "$db" --to "$other" \
  --migrations "$src/migrations"
! grep -q "$PGPASSWORD" "$tmp/out" "$tmp/err" && pass || fail "the password was printed"

summary
