# Shared by the dispatchctl black-box tests that run on a seeded database
# (tests/support/seed.cpp): names the arguments, loads lib.sh and seeds a database.
# Sourced with the caller's arguments DISPATCHCTL DISPATCHD_SEED SOURCE_DIR, as
# `. "$3/tests/cli/seeded.sh"`.
#
# Either backend, so that one script's expectations hold on both: with
# DISPATCHD_TEST_POSTGRESQL_DIR set (the test server's folder, tests/postgresql/cluster.sh)
# the database is a fresh one on that server, dropped at exit; else the SQLite file $tmp/d.db.
# Afterwards:
#   $backend        sqlite | postgresql
#   $db             the --db target (a path, or a URI without the password: dispatchctl's
#                   libpq reads PGPASSWORD, exported here)
#   $db_json        the configuration's database keys (PostgreSQL: with database_password_env)
#   q SQL           one query on $db, rows on lines, columns joined by '|'
#   q_at DB SQL     the same on another database of copy_db's
#   copy_db NAME    a copy of $db (a file, or a database made from it as a template): prints its target
#   drop_audit_trigger  the SQL a tamperer runs first (the audit table refuses UPDATE)
set -u
ctl=$1
seed=$2
src=$3
. "$src/tests/cli/lib.sh"

if [ -n "${DISPATCHD_TEST_POSTGRESQL_DIR:-}" ]; then
  backend=postgresql
  pg_dir=$DISPATCHD_TEST_POSTGRESQL_DIR
  pg_base=$(sed 's#/[^/]*$##' "$pg_dir/uri")  # postgresql://dispatchd@127.0.0.1:PORT
  pg_prefix=cli_$$_
  PGPASSWORD=$(cat "$pg_dir/password")
  export PGPASSWORD
  # The configuration's route to the password: another variable than libpq's own, so that
  # --config is seen to use database_password_env.
  export DISPATCHD_TEST_DB_PASSWORD=$PGPASSWORD
  pg_psql() { bash "$src/tests/postgresql/cluster.sh" psql "$pg_dir" "$@"; }
  # Every database this run made carries its prefix (they are made in subshells: $(copy_db ...)).
  pg_cleanup() {
    local name
    for name in $(pg_psql -At -c "SELECT datname FROM pg_database WHERE starts_with(datname, '$pg_prefix')"); do
      pg_psql -c "DROP DATABASE IF EXISTS $name WITH (FORCE)" >/dev/null 2>&1
    done
    rm -rf "$tmp"
  }
  trap pg_cleanup EXIT
  # Creates database $1 (empty, or a copy of template $2) and prints its URI.
  pg_create() {
    local sql="CREATE DATABASE $1"
    [ $# -gt 1 ] && sql+=" TEMPLATE $2"
    pg_psql -c "$sql" >/dev/null || { echo "FAIL: $sql"; exit 1; }
    echo "$pg_base/$1"
  }
  db=$(pg_create "${pg_prefix}d")
  db_json="\"database\": \"$db\", \"database_password_env\": \"DISPATCHD_TEST_DB_PASSWORD\""
  q_at() { psql -X -q -A -t -v ON_ERROR_STOP=1 "$1" -c "$2"; }
  copy_db() { pg_create "$pg_prefix$1" "${db##*/}"; }
  drop_audit_trigger="DROP TRIGGER audit_no_update ON audit"
else
  backend=sqlite
  db=$tmp/d.db
  db_json='"database": "d.db"'
  q_at() { sqlite3 "$1" "$2"; }
  copy_db() { cp "$db" "$tmp/$1.db" && echo "$tmp/$1.db"; }
  drop_audit_trigger="DROP TRIGGER audit_no_update"
fi
"$seed" "$db" >/dev/null || { echo "FAIL: seeding"; exit 1; }
q() { q_at "$db" "$1"; }
