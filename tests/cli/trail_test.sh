#!/usr/bin/env bash
# Black-box test of `dispatchctl trail` on a seeded database (tests/support/seed.cpp):
# exit codes, Markdown sections, JSON content, --provider-id, a tampered chain. Runs on either
# backend (seeded.sh: DISPATCHD_TEST_POSTGRESQL_DIR set for PostgreSQL).
# Usage: trail_test.sh DISPATCHCTL DISPATCHD_SEED SOURCE_DIR
. "$3/tests/cli/seeded.sh"
cat >"$tmp/dispatchd.json" <<JSON
{ $db_json, "catalog": "$src/catalog/examples/support.en.json",
  "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "K",
          "history_messages": 1} }
JSON

# Exit codes: 0 printed, 1 no such message, 2 usage.
expect "usage: no id" 2 'usage: dispatchctl' -- "$ctl" --db "$db" trail </dev/null
expect "usage: bad id" 2 'MESSAGE_ID must be a positive whole number' -- "$ctl" --db "$db" trail x4 </dev/null
expect "usage: both formats" 2 'not both' -- "$ctl" --db "$db" trail 4 --json --markdown </dev/null
expect "usage: id and provider id" 2 'usage:' -- "$ctl" --db "$db" trail 4 --provider-id wamid.seed4 </dev/null
expect "usage: no database" 2 'give --config FILE or --db FILE' -- "$ctl" trail 4 </dev/null
expect "no such message" 1 'no message 99' -- "$ctl" --db "$db" trail 99 </dev/null
expect "no such provider id" 1 'no message with provider id wamid.nope' -- "$ctl" --db "$db" trail --provider-id wamid.nope </dev/null
expect "help names trail" 0 'trail MESSAGE_ID \| --provider-id ID \[--markdown \| --json\]' -- "$ctl" --help </dev/null

# Markdown (the default): the sections in order, for a replied, an escalated and an edited message.
want='# Trail of message N|## Inbound message|## Files|## Context given to the model|## Attempts|## Tool calls|## Decision|## Outbox|## Escalations|## Staff actions|## Audit events'
for id in 1 3 4; do
  "$ctl" --db "$db" trail "$id" >"$tmp/t$id.md" || fail "trail $id exits $?"
  got=$(grep -E '^##? ' "$tmp/t$id.md" | sed "s/message $id\$/message N/" | paste -sd'|')
  [ "$got" = "$want" ] && pass || fail "trail $id sections: $got"
  grep -q '^The chain verifies across audit ids' "$tmp/t$id.md" && pass || fail "trail $id chain sentence"
done
"$ctl" --db "$db" trail 4 --markdown | cmp -s - "$tmp/t4.md" && pass || fail "--markdown is the default"
grep -qE '^\| 3 \| send\\_message \| sent \| ana \| 15551230001 \| out.dispatchd-4-2 \|' "$tmp/t4.md" && pass || fail "edited: the sent row"
grep -qE '^\| [0-9]+ \| [0-9TZ:-]+ \| ana \| staff\\_resolved \|' "$tmp/t4.md" && pass || fail "edited: staff action"
# The raw output that holds a ``` fence sits inside a longer one.
"$ctl" --db "$db" trail 2 >"$tmp/t2.md"
grep -qx '````' "$tmp/t2.md" && grep -qx '```json' "$tmp/t2.md" && pass || fail "a fenced raw output gets a longer fence"

# --provider-id finds the same message; --config takes the history length from the configuration.
"$ctl" --db "$db" trail --provider-id wamid.seed4 | cmp -s - "$tmp/t4.md" && pass || fail "--provider-id"
expect "history from the configuration" 0 'History: 1 entry \(at most 1\)' -- "$ctl" --config "$tmp/dispatchd.json" trail 4 </dev/null

# JSON: the content.
"$ctl" --db "$db" trail 4 --json >"$tmp/t4.json" || fail "trail 4 --json"
python3 - "$tmp/t4.json" <<'PY' && pass || fail "trail 4 --json content"
import json, sys
t = json.load(open(sys.argv[1]))
assert t["message"]["message_id"] == 4 and t["message"]["outcome"] == "escalated", t["message"]
assert [a["status"] for a in t["actions"]] == ["rejected", "sent"], t["actions"]
assert t["actions"][1]["created_by"] == "ana" and t["actions"][1]["provider_message_id"] == "out.dispatchd-4-2"
assert t["escalations"][0]["resolution"] == "edited" and t["escalations"][0]["assignee"] == "ana"
assert {a["event"] for a in t["staff_actions"]} == {"staff_claim", "action", "staff_resolved"}
assert t["chain"]["verified"] is True and t["chain"]["from"] == t["audit"][0]["audit_id"]
assert all(len(a["hash"]) == 64 for a in t["audit"])
PY
"$ctl" --db "$db" trail 3 --json >"$tmp/t3.json"
python3 - "$tmp/t3.json" <<'PY' && pass || fail "trail 3 --json content"
import json, sys
t = json.load(open(sys.argv[1]))
assert [a["error_class"] for a in t["attempts"]] == ["recipient", "recipient", "truncated"]
assert t["escalations"][0]["reason"] == "contract_failed" and t["actions"] == []
assert t["decision"]["summary"].startswith("escalated (contract_failed)")
PY

# A changed audit row of the message: the trail says where the chain breaks (and still exits 0).
id=$(q "SELECT audit_id FROM v_audit WHERE message_id = 4 AND event = 'staff_claim'")
q "$drop_audit_trigger; UPDATE audit SET actor = 'luis' WHERE id = $id"
expect "a tampered row is named" 0 "The chain does NOT verify.*broken at audit id $id" -- "$ctl" --db "$db" trail 4 </dev/null
"$ctl" --db "$db" trail 4 --json | python3 -c "import json,sys; c=json.load(sys.stdin)['chain']; assert c['verified'] is False and c['first_broken']==$id, c" \
  && pass || fail "a tampered row in JSON"
summary
