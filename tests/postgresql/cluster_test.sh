#!/usr/bin/env bash
# The test server harness (cluster.sh): a committed row survives a restart and a SIGKILL of
# the server, and the server takes connections on 127.0.0.1 with the password only. On a
# server of its own in DIR (started here, stopped at the end): restarting the shared one
# would cut the tests that run beside this one.
set -euo pipefail
dir=${1:?usage: cluster_test.sh DIR}
here=$(dirname "$0")
cluster() { bash "$here/cluster.sh" "$@"; }
fail() { echo "FAIL: $*"; exit 1; }
cluster start "$dir" >/dev/null
trap 'cluster stop "$dir" >/dev/null' EXIT

uri=$(cat "$dir/uri")
case "$uri" in postgresql://dispatchd@127.0.0.1:*/dispatchd) ;; *) fail "unexpected URI $uri" ;; esac
cluster psql "$dir" -c "CREATE TABLE IF NOT EXISTS harness(n int); DELETE FROM harness; INSERT INTO harness VALUES (1)"
cluster restart "$dir"
[ "$(cluster psql "$dir" -At -c 'SELECT sum(n) FROM harness')" = 1 ] || fail "the row did not survive a restart"
cluster psql "$dir" -c "INSERT INTO harness VALUES (2)"
cluster kill "$dir"
cluster start "$dir" >/dev/null
[ "$(cluster psql "$dir" -At -c 'SELECT sum(n) FROM harness')" = 3 ] || fail "the row did not survive a kill"
# Over TCP a wrong password is refused (scram-sha-256), the right one accepted.
if PGPASSWORD=wrong psql -X -h 127.0.0.1 -p "$(cat "$dir/port")" -U dispatchd -c 'SELECT 1' dispatchd >/dev/null 2>&1; then
  fail "a wrong password was accepted"
fi
cluster psql "$dir" -c "DROP TABLE harness"
echo ok
