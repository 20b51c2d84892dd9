#!/usr/bin/env bash
# Black-box test of what dispatchctl and dispatchd do only on PostgreSQL: `migrate` on a URI,
# where the password comes from (config/database_password.h: the credential, the variable
# database_password_env names, libpq's own), a password in the URI refused, and the
# commands that work on the SQLite file by nature (erase's scrub) saying so. What both
# backends share (queue, audit, tampering, trail, replay --offline and --online) runs in
# staff_test.sh, trail_test.sh, replay_test.py and online_replay_test.py, registered for both.
# Usage: postgresql_test.sh DISPATCHCTL DISPATCHD_SEED SOURCE_DIR DISPATCHD
# (DISPATCHD_TEST_POSTGRESQL_DIR names the test server: tests/postgresql/cluster.sh)
[ -n "${DISPATCHD_TEST_POSTGRESQL_DIR:-}" ] || { echo "FAIL: DISPATCHD_TEST_POSTGRESQL_DIR is not set"; exit 1; }
dispatchd=$4
. "$3/tests/cli/seeded.sh"
en=$src/catalog/examples/support.en.json
password=$PGPASSWORD

# A configuration on $1 (a URI) with database_password_env $2.
config() {
  cat >"$tmp/$3.json" <<JSON
{ "database": "$1", "database_password_env": "$2", "catalog": "$en",
  "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "K"} }
JSON
  echo "$tmp/$3.json"
}

# migrate: migrations/postgresql/ on an empty database, then up to date, an edited file refused.
empty=$(pg_create "${pg_prefix}empty")
expect "migrate a URI" 0 'applied 0001_initial.sql' -- "$ctl" migrate --db "$empty" </dev/null
expect "migrate again names the URI" 0 "^${empty//./\\.}: schema version [0-9]+ \\(up to date\\)$" -- \
  "$ctl" migrate --db "$empty" </dev/null
[ "$(q_at "$empty" "SELECT count(*) FROM schema_migrations")" = "$(ls "$src"/migrations/postgresql/*.sql | wc -l)" ] \
  && pass || fail "every PostgreSQL migration recorded"
mkdir -p "$tmp/m/postgresql" && cp "$src"/migrations/postgresql/*.sql "$tmp/m/postgresql/"
echo "-- edited" >>"$tmp/m/postgresql/0001_initial.sql"
expect "migrate refuses an edited migration" 1 'was changed after it was applied' -- \
  "$ctl" migrate --db "$empty" --migrations "$tmp/m" </dev/null
expect "audit verify on an empty trail" 0 'audit: ok, 0 events' -- "$ctl" audit verify --db "$empty" </dev/null

# The password's routes. libpq's own first: PGPASSWORD (exported by seeded.sh) with --db.
expect "--db URI with PGPASSWORD" 0 'contract_failed' -- "$ctl" --db "$db" queue list </dev/null
expect "--db URI without any password" 2 'password' -- env -u PGPASSWORD "$ctl" --db "$db" queue list </dev/null
expect "--db-password-env NAME" 0 'contract_failed' -- \
  env -u PGPASSWORD "$ctl" --db "$db" --db-password-env DISPATCHD_TEST_DB_PASSWORD queue list </dev/null
expect "--db-password-env naming an unset variable" 2 'database_password_env names NOPE, which is not set' -- \
  env -u PGPASSWORD "$ctl" --db "$db" --db-password-env NOPE queue list </dev/null
expect "--db-password-env with a SQLite file" 2 'is for a postgresql:// database' -- \
  "$ctl" --db "$tmp/x.db" --db-password-env DISPATCHD_TEST_DB_PASSWORD queue list </dev/null
good=$(config "$db" DISPATCHD_TEST_DB_PASSWORD good)
expect "--config: database_password_env" 0 'contract_failed' -- env -u PGPASSWORD "$ctl" --config "$good" queue list </dev/null
unset_env=$(config "$db" DISPATCHD_TEST_UNSET unset)
expect "--config: database_password_env unset" 2 'DISPATCHD_TEST_UNSET, which is not set' -- \
  "$ctl" --config "$unset_env" queue list </dev/null
# The systemd credential wins over the variable, whether that is unset or wrong.
mkdir -p "$tmp/creds" && printf '%s\n' "$password" >"$tmp/creds/database_password"
expect "credential, variable unset" 0 'contract_failed' -- \
  env -u PGPASSWORD CREDENTIALS_DIRECTORY="$tmp/creds" "$ctl" --config "$unset_env" queue list </dev/null
mkdir -p "$tmp/wrong" && echo wrong-password >"$tmp/wrong/database_password"
expect "a wrong credential wins over a right variable" 2 'password authentication failed' -- \
  env -u PGPASSWORD CREDENTIALS_DIRECTORY="$tmp/wrong" "$ctl" --config "$good" queue list </dev/null
! grep -q -- "$password\|wrong-password" "$tmp/out" "$tmp/err" && pass || fail "a password in the output"
# A password in the URI: refused, and never repeated.
with_password=${db/dispatchd@/dispatchd:$password@}
expect "--db URI with a password" 2 'URI holds a password' -- "$ctl" --db "$with_password" queue list </dev/null
! grep -q -- "$password" "$tmp/out" "$tmp/err" && pass || fail "the URI's password echoed"
expect "configuration URI with a password" 2 '/database: holds a password.*may be logged or shown' -- \
  "$ctl" --config "$(config "$with_password" "" inline)" queue list </dev/null
! grep -q -- "$password" "$tmp/out" "$tmp/err" && pass || fail "the configuration's password echoed"

# dispatchd --check-config resolves it the same way.
export K=key
expect "check-config: password from the variable" 0 ': ok$' -- "$dispatchd" --check-config --config "$good" </dev/null
grep -q '^database password: from the environment variable ' "$tmp/out" && pass ||
  fail "check-config names the variable: $(cat "$tmp/out")"
! grep -q -- "$password" "$tmp/out" "$tmp/err" && pass || fail "check-config echoed the password"
expect "check-config: the variable unset" 1 'database: database_password_env names DISPATCHD_TEST_UNSET' -- \
  "$dispatchd" --check-config --config "$unset_env" </dev/null
expect "check-config: the credential" 0 ': ok$' -- \
  env CREDENTIALS_DIRECTORY="$tmp/creds" "$dispatchd" --check-config --config "$unset_env" </dev/null
grep -q "^database password: from the systemd credential $tmp/creds/database_password" "$tmp/out" && pass ||
  fail "check-config names the credential: $(cat "$tmp/out")"

# What works on the SQLite file by nature.
expect "erase: VACUUM FULL, the WAL left to the server" 0 '^scrub: vacuumed, WAL left to the server$' -- \
  "$ctl" --config "$good" erase --counterpart 15551230001 --as dpo </dev/null
grep -q "note: the old row versions stay in PostgreSQL's WAL" "$tmp/err" && pass || fail "erase's note: $(cat "$tmp/err")"
expect "the chain verifies after the erasure" 0 '^audit: ok, [0-9]+ events, chain intact$' -- "$ctl" --db "$db" audit verify </dev/null
[ "$(q "SELECT count(*) FROM inbox WHERE sender = '15551230001'")" = 0 ] && pass || fail "the number is still there"

summary
