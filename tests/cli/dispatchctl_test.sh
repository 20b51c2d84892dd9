#!/usr/bin/env bash
# Black-box test of dispatchctl: exit codes and output shapes of validate, extract and
# catalog, as docs/cli.md specifies them. Usage: dispatchctl_test.sh DISPATCHCTL SOURCE_DIR
set -u
ctl=$1
src=$2
en=$src/catalog/examples/support.en.json
es=$src/catalog/examples/support.es.json
. "$src/tests/cli/lib.sh"

good='{"action":"send_message","recipient":"15551234567","content":"Hi","priority":"low"}'

printf '```json\n%s\n```' "$good" | expect "valid fenced reply" 0 '^\{"ok":true,"output":\{"action":"send_message".*"repairs":\[\{"code":"fence"' -- \
  "$ctl" validate --catalog "$en" --sender 15551234567
printf '%s' "${good/low/urgent}" | expect "enum error" 1 '^\{"ok":false,"stage":"contract","errors":\[\{"path":"/priority","code":"enum"' -- \
  "$ctl" validate --catalog "$en" --sender 15551234567
printf '%s' "${good/low/urgent}" | expect "feedback present" 1 '"feedback":"Your previous reply was rejected: 1 error' -- \
  "$ctl" validate --catalog "$en" --sender 15551234567
printf '%s' "$good" | expect "recipient policy" 1 '"code":"recipient"' -- \
  "$ctl" validate --catalog "$en" --sender 15550000000
echo "Please write to 15559999999" > "$tmp/source.txt"
printf '%s' "$good" | expect "source file accepted" 0 '"ok":true' -- \
  "$ctl" validate --catalog "$en" --sender 15551234567 --source "$tmp/source.txt"
printf '{"accion":"enviar_mensaje","destinatario":"5215512345678","contenido":"Hola","prioridad":"alta"}' |
  expect "spanish catalog" 0 '"accion":"enviar_mensaje"' -- "$ctl" validate --catalog "$es" --sender 5215512345678
head -c 3000000 /dev/zero | tr '\0' 'a' | expect "3 MB on stdin" 1 '"code":"too_large".*3000000 bytes' -- \
  "$ctl" validate --catalog "$en"
printf '%s' "$good" | expect "no catalog flag" 2 'validate needs --catalog' -- "$ctl" validate
printf '%s' "$good" | expect "unknown flag" 2 'unknown option --bogus' -- "$ctl" validate --catalog "$en" --bogus
printf '%s' "$good" | expect "missing catalog file" 2 'bad catalog: .*cannot open the file' -- \
  "$ctl" validate --catalog "$tmp/none.json"
echo '{"name":1}' > "$tmp/bad.json"
printf '%s' "$good" | expect "broken catalog" 2 'bad catalog: ' -- "$ctl" validate --catalog "$tmp/bad.json"
printf '%s' "$good" | expect "missing source file" 2 'cannot open' -- "$ctl" validate --catalog "$en" --source "$tmp/none.txt"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && pass || fail "usage error is one line"

printf 'Sure:\n```json\n%s\n```\nBye' "$good" | expect "extract" 0 '^\{"ok":true,"json":"\{\\"action\\".*"repairs":\[\{"code":"fence".*"prose_before".*"prose_after"' -- \
  "$ctl" extract
printf '{"action":"send_message","meta":{"a":1}' | expect "extract truncated" 1 '"code":"truncated"' -- "$ctl" extract

expect "lint en" 0 'ok \(3 actions, 3 fields, 8 examples\)' -- "$ctl" catalog lint --catalog "$en" </dev/null
expect "lint es" 0 'ok \(3 actions' -- "$ctl" catalog lint --catalog "$es" </dev/null
sed 's/"expect": "enum"/"expect": "type"/' "$en" > "$tmp/wrong-expect.json"
expect "lint catches a wrong expectation" 1 'examples/1: an invalid example fails with enum, not type' -- \
  "$ctl" catalog lint --catalog "$tmp/wrong-expect.json" </dev/null
for dialect in jsonschema openai gemini prompt; do
  expect "schema $dialect" 0 '' -- "$ctl" catalog schema --dialect "$dialect" --catalog "$en" </dev/null
done
expect "schema gemini ordering" 0 '"propertyOrdering"' -- "$ctl" catalog schema --dialect gemini --catalog "$en" </dev/null
expect "schema bad dialect" 2 'jsonschema, openai, gemini or prompt' -- "$ctl" catalog schema --dialect xml --catalog "$en" </dev/null
expect "migrate from empty" 0 'applied 0001_initial.sql' -- "$ctl" migrate --db "$tmp/d.db" </dev/null
expect "migrate again" 0 'schema version [0-9]+ \(up to date\)' -- "$ctl" migrate --db "$tmp/d.db" </dev/null
mkdir -p "$tmp/m/sqlite" && cp "$src"/migrations/sqlite/*.sql "$tmp/m/sqlite/" && echo "-- edited" >>"$tmp/m/sqlite/0001_initial.sql"
expect "migrate refuses an edited migration" 1 'was changed after it was applied' -- \
  "$ctl" migrate --db "$tmp/d.db" --migrations "$tmp/m" </dev/null
expect "audit verify on an empty trail" 0 'audit: ok, 0 events' -- "$ctl" audit verify --db "$tmp/d.db" </dev/null
sqlite3 "$tmp/d.db" "INSERT INTO audit(id, at, event, actor, detail, prev_hash, hash)
  VALUES (1, 't', 'forged', 'someone', '{}', '0000000000000000000000000000000000000000000000000000000000000000', 'x')"
expect "audit verify names a forged row" 1 'BROKEN at audit id 1' -- "$ctl" audit verify --db "$tmp/d.db" </dev/null
expect "migrate needs --db" 2 'migrate needs --db' -- "$ctl" migrate </dev/null
expect "version" 0 '^dispatchctl [0-9]' -- "$ctl" --version
expect "unknown command" 2 'unknown command' -- "$ctl" frobnicate

summary
