#!/usr/bin/env bash
# Black-box test of the dispatchd binary so far: --check-config, and the store prepared
# (migrations applied) at start. Usage: dispatchd_test.sh DISPATCHD DISPATCHCTL SOURCE_DIR
set -u
daemon=$1
ctl=$2
src=$3
. "$src/tests/cli/lib.sh"

cat >"$tmp/dispatchd.json" <<JSON
{ "database": "state/d.db", "catalog": "$src/catalog/examples/support.es.json",
  "migrations": {"dir": "$src/migrations"},
  "llm": {"provider": "gemini", "base_url": "http://127.0.0.1:9", "model": "m", "api_key_env": "DISPATCHD_TEST_KEY"} }
JSON
cfg=$tmp/dispatchd.json
mkdir "$tmp/state"
unset DISPATCHD_TEST_KEY
expect "check-config reports a missing secret" 1 'llm.api_key_env: secret DISPATCHD_TEST_KEY is not set' -- \
  "$daemon" --check-config --config "$cfg" </dev/null
DISPATCHD_TEST_KEY=k expect "check-config ok" 0 ': ok$' -- "$daemon" --check-config --config "$cfg" </dev/null
printf '{"llm": {"provider": "x"}, "bogus": 1}' >"$tmp/bad.json"
expect "check-config lists every problem" 1 '/bogus: unknown key' -- "$daemon" --check-config --config "$tmp/bad.json" </dev/null
expect "start applies the migrations" 2 'applied migration 0001_initial.sql' -- "$daemon" --config "$cfg" </dev/null
expect "and says what is missing" 2 'agent loop is not built yet' -- "$daemon" --config "$cfg" </dev/null
expect "the database is ready" 0 'audit: ok' -- "$ctl" --config "$cfg" audit verify </dev/null
expect "needs --config" 2 '--config FILE is required' -- "$daemon" </dev/null

summary
