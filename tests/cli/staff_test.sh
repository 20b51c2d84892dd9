#!/usr/bin/env bash
# Black-box test of the staff commands on a seeded database (tests/support/seed.cpp):
# queue, audit, backup, and tampering made with the database's own shell (sqlite3, psql).
# Runs on either backend (seeded.sh: DISPATCHD_TEST_POSTGRESQL_DIR set for PostgreSQL).
# Usage: staff_test.sh DISPATCHCTL DISPATCHD_SEED SOURCE_DIR
. "$3/tests/cli/seeded.sh"
en=$src/catalog/examples/support.en.json
# A --config file pointing at the seeded database and the English catalog.
cat >"$tmp/dispatchd.json" <<JSON
// comments are allowed
{ $db_json, "catalog": "$en",
  "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "K"} }
JSON
cfg=$tmp/dispatchd.json

# Listing.
expect "list needs a database" 2 'give --config FILE or --db FILE' -- "$ctl" queue list </dev/null
if [ "$backend" = sqlite ]; then
  expect "a missing database is not created" 2 'no such database' -- "$ctl" --db "$tmp/typo.db" queue list </dev/null
  [ ! -e "$tmp/typo.db" ] && pass || fail "typo.db was created"
else
  expect "a missing database is named" 2 'database "typo" does not exist' -- "$ctl" --db "${db%/*}/typo" queue list </dev/null
fi
expect "list all" 0 'contract_failed' -- "$ctl" --db "$db" queue list </dev/null
expect "list via --config" 0 'needs_approval' -- "$ctl" --config "$cfg" queue list </dev/null
expect "list --status" 0 'resolved +review_flags' -- "$ctl" queue list --status resolved --db "$db" </dev/null
expect "list --status bad" 2 '--status is open, claimed, resolved or dismissed' -- "$ctl" --db "$db" queue list --status done </dev/null
"$ctl" --db "$db" queue list --status open --json >"$tmp/list.json"
python3 -c 'import json,sys; rows=json.load(open(sys.argv[1])); assert [r["escalation_id"] for r in rows]==[1,2,4,5], rows; assert rows[3]["proposed_action"]["action"]=="send_message"' "$tmp/list.json" \
  && pass || fail "list --json"

# Show: the conversation, every attempt with raw output and errors, the proposal.
expect "show" 0 'attempts \(3\)' -- "$ctl" --db "$db" queue show 2 </dev/null
expect "show raw output" 0 'output: \{"action":"send_message","recipient":"15559999999","content":"Hi"$' -- "$ctl" --db "$db" queue show 2 </dev/null
expect "show errors" 0 'errors: \[\{"path":"/recipient","code":"recipient"' -- "$ctl" --db "$db" queue show 2 </dev/null
"$ctl" --db "$db" queue show 5 --json >"$tmp/show.json"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); assert c["proposed_action"]["content"]=="Your subscription is cancelled."; assert c["attempts"][0]["verdict"]=="review"; assert c["actions"][0]["status"]=="proposed"' "$tmp/show.json" \
  && pass || fail "show --json"
expect "show unknown" 1 'no escalation 99' -- "$ctl" --db "$db" queue show 99 </dev/null
expect "show bad id" 2 'ID must be a positive whole number' -- "$ctl" --db "$db" queue show abc </dev/null

# The seeded customers wrote days ago: their WhatsApp reply windows are closed, so free-form
# text is refused and show says so. Then they write again (their messages received now).
expect "show: the window is closed" 0 'reply window: closed since 2026-' -- "$ctl" --config "$cfg" queue show 4 </dev/null
expect "reply refused while the window is closed" 1 'reply window is closed \(it closed at 2026-' -- \
  "$ctl" --db "$db" queue reply 4 --as ana --text hi </dev/null
q "UPDATE inbox SET received_at = '$(date -u +%Y-%m-%dT%H:%M:%SZ)'" >/dev/null
expect "show: the window is open" 0 'reply window: open until ' -- "$ctl" --config "$cfg" queue show 4 </dev/null

# Claims and the state machine.
expect "claim needs --as" 2 'needs --as NAME' -- "$ctl" --db "$db" queue claim 5 </dev/null
expect "claim" 0 'claimed by ana' -- "$ctl" --db "$db" queue claim 5 --as ana </dev/null
expect "claim by another names the holder" 1 'claimed by ana' -- "$ctl" --db "$db" queue claim 5 --as luis </dev/null
expect "approve by another names the holder" 1 'claimed by ana' -- "$ctl" --config "$cfg" queue approve 5 --as luis </dev/null

# An edited action goes through the validator: a wrong enum is refused with its message.
bad='{"action":"send_message","recipient":"15551230006","content":"Cancelled.","priority":"urgent"}'
expect "edit with an invalid enum" 1 '/priority: .*"high", "medium", "low"' -- \
  "$ctl" --config "$cfg" queue edit 5 --as ana --action "$bad" </dev/null
expect "edit --json prints the verdict" 1 '"code":"enum"' -- \
  "$ctl" --config "$cfg" queue edit 5 --as ana --action "$bad" --json </dev/null
other='{"action":"send_message","recipient":"15559999999","content":"Cancelled.","priority":"high"}'
expect "edit to another recipient" 1 'recipient' -- "$ctl" --config "$cfg" queue edit 5 --as ana --action "$other" </dev/null
expect "edit needs a catalog" 2 'needs the catalog' -- "$ctl" --db "$db" queue edit 5 --as ana --action "$bad" </dev/null
[ "$(q "SELECT status FROM v_escalations WHERE escalation_id = 5")" = claimed ] && pass || fail "refused edits changed the escalation"

expect "approve" 0 'resolved by ana: action [0-9]+ is in the outbox' -- "$ctl" --config "$cfg" queue approve 5 --as ana </dev/null
[ "$(q "SELECT status FROM v_actions WHERE escalation_id = 5")" = approved ] && pass || fail "approved proposal not in the outbox"
expect "no double resolve" 1 'already resolved' -- "$ctl" --config "$cfg" queue approve 5 --as ana </dev/null
expect "no reply after resolve" 1 'already resolved' -- "$ctl" --db "$db" queue reply 5 --as ana --text hi </dev/null

good='{"action":"send_message","recipient":"15551230002","content":"Una persona te escribe en 5 minutos.","priority":"high"}'
expect "edit" 0 'resolved by luis' -- "$ctl" --db "$db" --catalog "$en" queue edit 1 --as luis --action "$good" </dev/null
[ "$(q "SELECT created_by || ' ' || status FROM v_actions WHERE escalation_id = 1")" = "luis approved" ] && pass || fail "edit action"
expect "reply" 0 'resolved by ana' -- "$ctl" --db "$db" queue reply 4 --as ana --text "Yes, open 10:00-14:00 on Sunday." </dev/null
[ "$(q "SELECT action || ' ' || recipient FROM v_actions WHERE escalation_id = 4 AND created_by = 'ana'")" = "staff_reply 15551230004" ] \
  && pass || fail "reply action"
expect "dismiss needs a note" 2 'needs --note' -- "$ctl" --db "$db" queue dismiss 2 --as ana </dev/null
expect "dismiss" 0 'dismissed by ana' -- "$ctl" --db "$db" queue dismiss 2 --as ana --note "prompt injection, no reply" </dev/null
expect "no claim after dismiss" 1 'already dismissed' -- "$ctl" --db "$db" queue claim 2 --as luis </dev/null

# Audit listing.
expect "audit --message" 0 'staff_dismissed +3 +ana' -- "$ctl" --db "$db" audit --message 3 </dev/null
expect "audit --since" 0 '^[0-9]+ +2026-12-01' -- "$ctl" --db "$db" audit --since 2026-12-01 </dev/null
"$ctl" --db "$db" audit --since 2026-12-01 --json >"$tmp/audit.json"
python3 -c 'import json,sys; rows=json.load(open(sys.argv[1])); assert rows and all(r["at"]>="2026-12-01" for r in rows); assert all(len(r["hash"])==64 for r in rows)' "$tmp/audit.json" \
  && pass || fail "audit --json"
expect "audit --since bad" 2 '--since takes a UTC time' -- "$ctl" --db "$db" audit --since yesterday </dev/null
expect "audit verify clean" 0 'audit: ok, [0-9]+ events' -- "$ctl" --config "$cfg" audit verify </dev/null

# Staff accounts: the token alone on stdout's first line, only its hash stored.
"$ctl" --config "$cfg" staff add marta >"$tmp/token" 2>"$tmp/add.err" && pass || fail "staff add"
token=$(head -1 "$tmp/token")
[[ "$token" =~ ^[0-9a-f]{64}$ ]] && [ "$(wc -l <"$tmp/token")" = 1 ] && pass || fail "staff add prints one token line: $(cat "$tmp/token")"
[ "$(q "SELECT count(*) FROM staff_accounts WHERE token_hash = '$(printf %s "$token" | sha256sum | cut -d' ' -f1)'")" = 1 ] \
  && pass || fail "the stored hash is the token's SHA-256"
[ "$(q "SELECT count(*) FROM staff_accounts WHERE token_hash = '$token'")" = 0 ] && pass || fail "the token itself is stored"
expect "staff add twice" 1 'already exists' -- "$ctl" --config "$cfg" staff add marta </dev/null
expect "staff add a bad name" 1 'staff name is 1 to 64 characters' -- "$ctl" --config "$cfg" staff add 'mar ta' </dev/null
expect "staff list" 0 'marta +active' -- "$ctl" --config "$cfg" staff list </dev/null
expect "staff revoke" 0 'marta revoked' -- "$ctl" --config "$cfg" staff revoke marta </dev/null
expect "staff revoke twice" 1 'no active staff account marta' -- "$ctl" --config "$cfg" staff revoke marta </dev/null
expect "staff list --json" 0 '"name":"marta","created_at":"[^"]+","revoked_at":"2' -- "$ctl" --config "$cfg" staff list --json </dev/null
[ "$(q "SELECT event FROM v_audit WHERE event LIKE 'staff_account%' ORDER BY audit_id" | paste -sd,)" = "staff_account_added,staff_account_revoked" ] \
  && pass || fail "account changes are audited"
expect "staff needs a verb" 2 'usage' -- "$ctl" --config "$cfg" staff </dev/null

# Tampering with the database's shell. The audit table refuses UPDATE by trigger, so a
# tamperer drops the trigger first; verify names the first row whose hash breaks.
if q "UPDATE audit SET actor = 'x' WHERE id = 5" >/dev/null 2>"$tmp/err"; then fail "the trigger allowed an UPDATE"
else grep -q 'append-only' "$tmp/err" && pass || fail "the trigger's message: $(cat "$tmp/err")"; fi
upd=$(copy_db upd)
q_at "$upd" "$drop_audit_trigger; UPDATE audit SET actor = 'mallory' WHERE id = 7"
expect "verify names the updated row" 1 'BROKEN at audit id 7 .*contents do not match' -- "$ctl" --db "$upd" audit verify </dev/null
del=$(copy_db del)
q_at "$del" "DELETE FROM audit WHERE id = 12"
expect "verify names the row after a delete" 1 'BROKEN at audit id 13 .*deleted or changed' -- "$ctl" --db "$del" audit verify </dev/null

if [ "$backend" = sqlite ]; then
  # Backup: online copy, verified, never overwriting.
  expect "backup" 0 'integrity ok, audit chain ok' -- "$ctl" --db "$db" backup "$tmp/copy.db" </dev/null
  [ "$(sqlite3 "$tmp/copy.db" "SELECT count(*) FROM v_audit")" = "$(q "SELECT count(*) FROM v_audit")" ] && pass || fail "backup content"
  expect "backup verifies" 0 'audit: ok' -- "$ctl" --db "$tmp/copy.db" audit verify </dev/null
  expect "backup never overwrites" 1 'exists' -- "$ctl" --db "$db" backup "$tmp/copy.db" </dev/null
  expect "a tampered database is not backed up" 1 'audit chain is broken at audit id 13' -- "$ctl" --db "$del" backup "$tmp/bad.db" </dev/null
  [ ! -e "$tmp/bad.db" ] && [ ! -e "$tmp/bad.db.partial" ] && pass || fail "a failed backup left files"
else
  # PostgreSQL is backed up by its own tools: the refusal gives the command, and writes nothing.
  expect "backup names pg_dump" 1 "pg_dump --format=custom --file=$tmp/copy.dump '${db//./\\.}'" -- \
    "$ctl" --config "$cfg" backup "$tmp/copy.dump" </dev/null
  [ ! -e "$tmp/copy.dump" ] && pass || fail "a refused backup wrote a file"
fi

summary
