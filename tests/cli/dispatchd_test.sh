#!/usr/bin/env bash
# Black-box test of the dispatchd binary's start and stop: --check-config, the store
# prepared (migrations applied) at start, exit 0 on SIGTERM. Usage: dispatchd_test.sh DISPATCHD DISPATCHCTL SOURCE_DIR
set -u
daemon=$1
ctl=$2
src=$3
. "$src/tests/cli/lib.sh"

cat >"$tmp/dispatchd.json" <<JSON
{ "database": "state/d.db", "catalog": "$src/catalog/examples/support.es.json",
  "migrations": {"dir": "$src/migrations"}, "http": {"listen": "127.0.0.1:0"},
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
sed 's|"llm":|"connectors": {"whatsapp": {"message_types": {"image": "drop", "location": {"reply": ""}}}}, "llm":|' \
  "$cfg" >"$tmp/types.json"
DISPATCHD_TEST_KEY=k expect "check-config names a bad message type handling" 1 \
  '/connectors/whatsapp/message_types/image: must be "model", "escalate", "ignore" or \{"reply": "the text to send"\}, not "drop"' -- \
  "$daemon" --check-config --config "$tmp/types.json" </dev/null
DISPATCHD_TEST_KEY=k expect "check-config names a blank fixed reply" 1 '/connectors/whatsapp/message_types/location/reply: must not be blank' -- \
  "$daemon" --check-config --config "$tmp/types.json" </dev/null
sed 's|"llm":|"escalation": {"notify_url": "hooks.example.com/services/x"}, "llm":|' "$cfg" >"$tmp/notify.json"
DISPATCHD_TEST_KEY=k expect "check-config names a notify_url that is not an http(s) URL" 1 \
  '/escalation/notify_url: must be an http:// or https:// URL with a host' -- \
  "$daemon" --check-config --config "$tmp/notify.json" </dev/null
expect "start without the model key" 1 'cannot start: llm.api_key_env' -- "$daemon" --config "$cfg" </dev/null
# A real start: migrations applied, the listener bound, then SIGTERM ends it with exit 0.
DISPATCHD_TEST_KEY=k "$daemon" --config "$cfg" >"$tmp/run.log" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q 'listening on' "$tmp/run.log" && break; sleep 0.1; done
grep -q 'applied migration 0001_initial.sql' "$tmp/run.log" && pass || { fail "start applies the migrations"; cat "$tmp/run.log"; }
kill -TERM "$pid"
wait "$pid"
code=$?
[ "$code" -eq 0 ] && pass || { fail "SIGTERM: exit $code"; cat "$tmp/run.log"; }
expect "the database is ready" 0 'audit: ok' -- "$ctl" --config "$cfg" audit verify </dev/null
# Started at systemd's soft limit of 1,024 open files with 2,000 model permits: dispatchd
# raises its own soft limit to what the configuration needs (the hard limit allowing).
sed 's|"model": "m",|"model": "m", "max_concurrency": 2000,|' "$cfg" >"$tmp/wide.json"
if [ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -ge 4096 ]; then
  (ulimit -Sn 1024; DISPATCHD_TEST_KEY=k exec "$daemon" --config "$tmp/wide.json" >"$tmp/wide.log" 2>&1) &
  pid=$!
  for _ in $(seq 100); do grep -q 'listening on' "$tmp/wide.log" && break; sleep 0.1; done
  soft=$(awk '/Max open files/ {print $4}' "/proc/$pid/limits")
  [ "$soft" -ge 2800 ] && pass || { fail "open files soft limit $soft, expected >= 2800"; cat "$tmp/wide.log"; }
  kill -TERM "$pid"
  wait "$pid"
fi
expect "needs --config" 2 '--config FILE is required' -- "$daemon" </dev/null

summary
