#!/usr/bin/env bash
# Black-box test of `dispatchctl erase` on a seeded database (tests/support/seed.cpp): what
# is refused, the output, no byte of the customer left in the file or its WAL, the chain
# still verifying, the other customers untouched.
# Usage: erase_test.sh DISPATCHCTL DISPATCHD_SEED SOURCE_DIR
. "$3/tests/cli/seeded.sh"
# Counts the files' bytes matching a pattern (the WAL may be absent).
traces() { cat "$db" "$db-wal" 2>/dev/null | grep -a -c -i -E -- "$1"; }

expect "needs --counterpart" 2 'needs --counterpart' -- "$ctl" --db "$db" erase --as dpo </dev/null
expect "needs --as" 2 'needs --as NAME' -- "$ctl" --db "$db" erase --counterpart 15551230001 </dev/null
expect "no stray words" 2 'usage: dispatchctl' -- "$ctl" --db "$db" erase 15551230001 --as dpo </dev/null
expect "unknown counterpart" 1 'refused: no message from 15550000000' -- \
  "$ctl" --db "$db" erase --counterpart 15550000000 --as dpo </dev/null
expect "a proposal waiting for staff is named" 1 'escalation [0-9]+ of message [0-9]+ is open' -- \
  "$ctl" --db "$db" erase --counterpart 15551230006 --as dpo </dev/null
expect "an unanswered message is named" 1 'message [0-9]+ is received' -- \
  "$ctl" --db "$db" erase --counterpart 15551230005 --as dpo </dev/null
[ "$(q "SELECT count(*) FROM audit WHERE event = 'erased'")" = 0 ] && pass || fail "a refusal recorded an erasure"

# 15551230001: a reply sent, then a review escalation answered by staff (an edit).
[ "$(traces '15551230001|ORD-1001')" -gt 0 ] && pass || fail "the seed has no trace of 15551230001 to erase"
expect "erase" 0 '^erased 2 messages, [0-9]+ attempts, [0-9]+ actions, 1 escalations, [0-9]+ audit events of erased:[0-9a-f]{64} \(audit event [0-9]+\)$' -- \
  "$ctl" --db "$db" erase --counterpart +15551230001 --as dpo-lucia </dev/null
grep -q '^scrub: vacuumed, WAL truncated$' "$tmp/out" && pass || fail "erase: not scrubbed: $(cat "$tmp/out" "$tmp/err")"
[ "$(traces '15551230001|ORD-1001|refund')" = 0 ] && pass || fail "15551230001's data is still in the file"
expect "the chain verifies after the erasure" 0 '^audit: ok, [0-9]+ events, chain intact$' -- "$ctl" --db "$db" audit verify </dev/null
digest=$(q "SELECT json_extract(detail, '$.counterpart') FROM audit WHERE event = 'erased'")
[ "$(q "SELECT count(*) FROM v_messages WHERE sender = '$digest' AND outcome IN ('replied', 'escalated')")" = 2 ] \
  && pass || fail "the erased messages no longer group under $digest"
"$ctl" --db "$db" audit --json >"$tmp/audit.json"
python3 -c 'import json,sys
e=[r for r in json.load(open(sys.argv[1])) if r["event"]=="erased"]
assert len(e)==1 and e[0]["actor"]=="dpo-lucia" and e[0]["message_id"] is None, e
assert e[0]["detail"]["counterpart"].startswith("erased:") and e[0]["detail"]["messages"]==2, e' "$tmp/audit.json" \
  && pass || fail "the erased event"
# The others are untouched.
[ "$(q "SELECT count(*) FROM v_messages WHERE sender = '15551230004' AND text = 'Is the shop open on Sunday?'")" = 1 ] \
  && pass || fail "another customer's message changed"
[ "$(traces 'Is the shop open on Sunday')" -gt 0 ] && pass || fail "another customer's text is gone from the file"

# An address, in another case than stored: the Gmail thread.
[ "$(traces 'maria@example|invoice been sent')" -gt 0 ] && pass || fail "the seed has no trace of maria@example.com"
expect "erase an address" 0 '^erased 1 messages' -- "$ctl" --db "$db" erase --counterpart Maria@Example.COM --as dpo </dev/null
[ "$(traces 'maria@example|invoice been sent')" = 0 ] && pass || fail "maria@example.com's data is still in the file"
expect "verify after both" 0 'chain intact' -- "$ctl" --db "$db" audit verify </dev/null
expect "again: nothing left to erase" 1 'no message from maria@example.com' -- \
  "$ctl" --db "$db" erase --counterpart maria@example.com --as dpo </dev/null
expect "scrub only" 0 '^scrub: vacuumed, WAL truncated$' -- "$ctl" --db "$db" erase --scrub-only </dev/null
expect "scrub only takes no counterpart" 2 'takes neither' -- \
  "$ctl" --db "$db" erase --scrub-only --counterpart 1 </dev/null

summary
