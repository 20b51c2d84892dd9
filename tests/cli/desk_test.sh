#!/usr/bin/env bash
# Black-box test of the staff desk's commands on a seeded database (tests/support/seed.cpp):
# queue release, takeover, reassign and note, what queue list, queue show and trail show of
# them, saved replies (replies, queue reply --saved), queue search and history, and the audit
# chain verified after each change. The idle clock is moved back with
# the database's own shell, as time would. Runs on either backend (seeded.sh).
# Usage: desk_test.sh DISPATCHCTL DISPATCHD_SEED SOURCE_DIR
. "$3/tests/cli/seeded.sh"
cat >"$tmp/dispatchd.json" <<JSON
{ $db_json, "catalog": "$src/catalog/examples/support.en.json",
  "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "K"},
  "staff": {"claim_idle_minutes": 45} }
JSON
cfg=$tmp/dispatchd.json
# The seeded customers wrote days ago; here they have written again (their WhatsApp reply
# windows open), as replies need (staff_test.sh checks the closed window).
q "UPDATE inbox SET received_at = '$(date -u +%Y-%m-%dT%H:%M:%SZ)'" >/dev/null
verified() { expect "audit verify after $1" 0 'audit: ok' -- "$ctl" --db "$db" audit verify </dev/null; }
"$ctl" --db "$db" staff add ana >/dev/null && "$ctl" --db "$db" staff add luis >/dev/null && pass || fail "staff add"

# Luis holds escalation 4; ana cannot decide it.
expect "claim" 0 'claimed by luis' -- "$ctl" --db "$db" queue claim 4 --as luis </dev/null
expect "list shows the holder" 0 '^4 +claimed .* luis +' -- "$ctl" --db "$db" queue list </dev/null
expect "another claim names the holder" 1 'refused: escalation 4 is claimed by luis' -- \
  "$ctl" --db "$db" queue claim 4 --as ana </dev/null

# Release: the holder only.
expect "release by another" 1 'escalation 4 is claimed by luis: only the holder releases it' -- \
  "$ctl" --db "$db" queue release 4 --as ana </dev/null
expect "release needs --as" 2 'needs --as NAME' -- "$ctl" --db "$db" queue release 4 </dev/null
expect "release by the holder" 0 'escalation 4 released by luis \(rule holder\): now held by nobody' -- \
  "$ctl" --db "$db" queue release 4 --as luis --note "off shift" </dev/null
[ "$(q "SELECT status || '|' || coalesce(assignee, '-') FROM v_escalations WHERE escalation_id = 4")" = "open|-" ] \
  && pass || fail "release leaves the item open and unassigned"
verified release
expect "release of an open item" 1 'escalation 4 is not claimed' -- "$ctl" --db "$db" queue release 4 --as luis </dev/null

# Take-over: after staff.claim_idle_minutes (45 in the configuration, 30 without one).
expect "claim again" 0 'claimed by luis' -- "$ctl" --db "$db" queue claim 4 --as luis </dev/null
expect "take-over too early (configured)" 1 'not idle yet: a take-over is allowed in 45 minutes' -- \
  "$ctl" --config "$cfg" queue takeover 4 --as ana </dev/null
expect "take-over too early (default)" 1 'allowed in 30 minutes' -- "$ctl" --db "$db" queue takeover 4 --as ana </dev/null
expect "take-over by the holder" 1 'already claimed by luis' -- "$ctl" --db "$db" queue takeover 4 --as luis </dev/null
q "UPDATE escalations SET claimed_at = '2020-01-01T00:00:00Z' WHERE id = 4" >/dev/null
expect "take-over of an idle claim" 0 'escalation 4 taken over by ana \(rule idle\): now held by ana' -- \
  "$ctl" --config "$cfg" queue takeover 4 --as ana --note "customer waiting" </dev/null
verified takeover
expect "the old holder is refused" 1 'claimed by ana' -- "$ctl" --db "$db" queue reply 4 --as luis --text hi </dev/null

# A revoked holder's claim is takeable at once.
expect "revoke ana" 0 'ana revoked' -- "$ctl" --db "$db" staff revoke ana </dev/null
expect "take-over from a revoked holder" 0 'taken over by luis \(rule holder_revoked\)' -- \
  "$ctl" --db "$db" queue takeover 4 --as luis </dev/null
verified "a revoked holder's take-over"

# Reassign: dispatchctl is an admin; the new holder must be an active account.
expect "reassign needs --to" 2 'needs --to NAME' -- "$ctl" --db "$db" queue reassign 4 --as ops </dev/null
expect "reassign to a revoked account" 1 'no active account to reassign escalation 4 to' -- \
  "$ctl" --db "$db" queue reassign 4 --to ana --as ops </dev/null
expect "reassign to nobody" 1 'no active account' -- "$ctl" --db "$db" queue reassign 4 --to nobody --as ops </dev/null
"$ctl" --db "$db" staff add bo >/dev/null && pass || fail "staff add bo"
expect "reassign" 0 'escalation 4 reassigned by ops \(rule admin\): now held by bo' -- \
  "$ctl" --db "$db" queue reassign 4 --to bo --as ops --note "bo knows this customer" </dev/null
verified reassign

# An account marked admin may reassign over the API; dispatchctl shows and changes the mark.
"$ctl" --db "$db" staff add chief --admin >/dev/null 2>"$tmp/add.err" && grep -q 'chief (admin) added' "$tmp/add.err" \
  && pass || fail "staff add --admin"
expect "list shows the admin" 0 '^chief +active .* admin$' -- "$ctl" --db "$db" staff list </dev/null
expect "admin off" 0 'staff account chief is not an admin' -- "$ctl" --db "$db" staff admin chief off </dev/null
expect "list without the admin" 0 '^chief +active .* -$' -- "$ctl" --db "$db" staff list </dev/null
expect "admin on" 0 'staff account chief is an admin' -- "$ctl" --db "$db" staff admin chief on </dev/null
expect "admin takes on or off" 2 'takes on or off' -- "$ctl" --db "$db" staff admin chief yes </dev/null
expect "admin of nobody" 1 'no active staff account nobody' -- "$ctl" --db "$db" staff admin nobody on </dev/null
"$ctl" --db "$db" staff list --json >"$tmp/staff.json"
python3 -c 'import json,sys; a={r["name"]: r["admin"] for r in json.load(open(sys.argv[1]))}; assert a["chief"] is True and a["bo"] is False, a' "$tmp/staff.json" \
  && pass || fail "staff list --json: admin"
[ "$(q "SELECT count(*) FROM v_audit WHERE event = 'staff_account_admin'")" = 3 ] && pass || fail "admin marks are audited"
verified "admin marks"

# Notes: any name, no claim needed, never sent; closed items take notes too.
outbox=$(q "SELECT count(*) FROM v_actions")
expect "note needs --text" 2 'needs --text' -- "$ctl" --db "$db" queue note 4 --as ana </dev/null
expect "an empty note" 1 'the note is empty' -- "$ctl" --db "$db" queue note 4 --as luis --text '' </dev/null
expect "a note too long" 1 'at most 4096' -- "$ctl" --db "$db" queue note 4 --as luis --text "$(printf 'x%.0s' {1..4097})" </dev/null
expect "note" 0 'note [0-9]+ added to escalation 4 by luis' -- \
  "$ctl" --db "$db" queue note 4 --as luis --text "Asked finance about the refund." </dev/null
[ "$(q "SELECT count(*) FROM v_actions")" = "$outbox" ] && pass || fail "a note reached the outbox"
[ "$(q "SELECT author || '|' || text FROM v_notes WHERE escalation_id = 4")" = "luis|Asked finance about the refund." ] \
  && pass || fail "the note is stored"
[ "$(q "SELECT count(*) FROM v_audit WHERE event = 'staff_note' AND actor = 'luis'")" = 1 ] && pass || fail "the note is audited"
verified note
expect "dismiss 2" 0 'dismissed by ana' -- "$ctl" --db "$db" queue dismiss 2 --as ana --note spam </dev/null
expect "note on a dismissed item" 0 'added to escalation 2' -- \
  "$ctl" --db "$db" queue note 2 --as ana --text "Seen: it was spam." </dev/null

# What show and trail tell of it.
expect "show: the hand-overs" 0 'takeover by ana: luis -> ana \(rule idle\): customer waiting' -- \
  "$ctl" --db "$db" queue show 4 </dev/null
expect "show: the reassignment" 0 'reassign by ops: luis -> bo \(rule admin\): bo knows this customer' -- \
  "$ctl" --db "$db" queue show 4 </dev/null
expect "show: the release" 0 'release by luis: luis -> open \(rule holder\): off shift' -- \
  "$ctl" --db "$db" queue show 4 </dev/null
expect "show: the notes" 0 'luis: Asked finance about the refund\.' -- "$ctl" --db "$db" queue show 4 </dev/null
"$ctl" --db "$db" queue show 4 --json >"$tmp/show.json"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); assert [h["kind"] for h in c["hand_overs"]]==["release","takeover","takeover","reassign"], c["hand_overs"]; assert c["notes"][0]["text"]=="Asked finance about the refund."; assert c["assignee"]=="bo"' "$tmp/show.json" \
  && pass || fail "show --json: hand-overs and notes"
message=$(q "SELECT message_id FROM v_escalations WHERE escalation_id = 4")
expect "trail shows the note" 0 'Note by luis at .* \(internal\): Asked finance about the refund\.' -- \
  "$ctl" --db "$db" trail "$message" </dev/null
expect "trail shows the hand-over events" 0 'staff\\?_reassign .*"rule":"admin"' -- "$ctl" --db "$db" trail "$message" </dev/null

# Saved replies: dispatchctl on the server is the operator (an admin); a placeholder is
# checked when saved, filled from the case when sent, and the text sent as any reply.
expect "replies: none yet" 0 'no saved replies' -- "$ctl" --db "$db" replies list </dev/null
expect "replies add needs --text" 2 'needs --text' -- "$ctl" --db "$db" replies add hi </dev/null
expect "replies: an unknown placeholder" 1 'unknown placeholder \{name\}' -- \
  "$ctl" --db "$db" replies add hi --text 'Hi {name}' </dev/null
expect "replies: an unmatched brace" 1 'is not closed' -- "$ctl" --db "$db" replies add hi --text 'Hi {customer' </dev/null
reply_id=$("$ctl" --db "$db" replies add hi --text 'Hola {customer}, {staff} aquí: caso {escalation} ({{{channel}}}).' \
  2>/dev/null </dev/null) && pass || fail "replies add"
expect "replies: a name in use" 1 'already named hi' -- "$ctl" --db "$db" replies add hi --text x </dev/null
expect "replies list" 0 "^$reply_id	hi	Hola \\{customer\\}" -- "$ctl" --db "$db" replies list </dev/null
expect "replies edit of nobody" 1 'no saved reply 999' -- "$ctl" --db "$db" replies edit 999 --text x </dev/null
expect "replies edit" 0 "saved reply $reply_id changed" -- \
  "$ctl" --db "$db" replies edit "$reply_id" --text 'Hola {customer}, {staff} aquí: caso {escalation} ({{{channel}}})!' \
  </dev/null
spare=$("$ctl" --db "$db" replies add spare --text 'Spare' 2>/dev/null </dev/null) && pass || fail "replies add spare"
expect "replies remove" 0 "saved reply $spare removed" -- "$ctl" --db "$db" replies remove "$spare" </dev/null
expect "a removed reply is gone" 1 "no saved reply $spare" -- "$ctl" --db "$db" replies remove "$spare" </dev/null
"$ctl" --db "$db" replies list --json >"$tmp/replies.json"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert [x["name"] for x in r]==["hi"], r; assert r[0]["created_by"].startswith("dispatchctl:"), r' \
  "$tmp/replies.json" && pass || fail "replies list --json"
[ "$(q "SELECT count(*) FROM v_audit WHERE event LIKE 'saved%reply%' AND message_id IS NULL")" = 4 ] \
  && pass || fail "saved reply changes are audited"
verified "saved replies"
open_case=$(q "SELECT min(escalation_id) FROM v_escalations WHERE status = 'open'")
customer=$(q "SELECT m.sender FROM v_escalations e JOIN inbox m ON m.id = e.message_id WHERE e.escalation_id = $open_case")
channel=$(q "SELECT m.channel FROM v_escalations e JOIN inbox m ON m.id = e.message_id WHERE e.escalation_id = $open_case")
expect "queue reply takes --text or --saved" 2 'needs --text TEXT or --saved ID' -- \
  "$ctl" --db "$db" queue reply "$open_case" --as luis </dev/null
expect "queue reply --saved of nobody" 1 'no saved reply 999' -- \
  "$ctl" --db "$db" queue reply "$open_case" --as luis --saved 999 </dev/null
expect "queue reply --saved" 0 "escalation $open_case resolved by luis" -- \
  "$ctl" --db "$db" queue reply "$open_case" --as luis --saved "$reply_id" </dev/null
[ "$(q "SELECT body FROM v_actions WHERE escalation_id = $open_case AND action = 'staff_reply'")" = \
  "Hola $customer, luis aquí: caso $open_case ({$channel})!" ] && pass || fail "the saved reply is sent filled"
verified "a saved reply sent"


# Search and history: newest first; a number as typed, an address as stored; the customer's
# messages across conversations with what was sent in answer.
expect "search by a number as typed" 0 '^3 +resolved .* 15551230001 ' -- \
  "$ctl" --db "$db" queue search --customer "+1 555 123-0001" </dev/null
[ "$("$ctl" --db "$db" queue search --from 2026-12-01 --json | tr ',' '\n' | grep -c '"escalation_id"')" = 3 ] \
  && pass || fail "search --from counts the cases opened that day and later"
expect "search by text in a note" 0 '^4 +claimed ' -- "$ctl" --db "$db" queue search --text "ASKED FINANCE" </dev/null
expect "search finds nothing" 0 'no escalations found' -- "$ctl" --db "$db" queue search --text zzzz </dev/null
expect "search refuses a bad date" 2 'from is a date, YYYY-MM-DD' -- \
  "$ctl" --db "$db" queue search --from 2026-13-01 </dev/null
expect "history shows the messages and the replies sent" 0 '-> send_message by dispatchd \(sent\): ORD-1001 ships' -- \
  "$ctl" --db "$db" queue history 3 </dev/null
expect "history pages" 0 'older: queue history 3 --before 4' -- "$ctl" --db "$db" queue history 3 --limit 1 </dev/null
expect "history of nothing" 1 'no escalation 999' -- "$ctl" --db "$db" queue history 999 </dev/null

summary
