#!/usr/bin/env bash
# Black-box test of `dispatchctl inspect email`: the decoded message as JSON, from a raw
# RFC 822 file, stdin or a Gmail messages.get?format=raw response, and its exit codes.
# Usage: inspect_test.sh DISPATCHCTL SOURCE_DIR
set -u
ctl=$1
src=$2
mail=$src/tests/data/mail
. "$src/tests/cli/lib.sh"

expect "raw file" 0 '^\{"from":\{"name":"Ana Pérez","address":"ana@example.com"\},"reply_to":null,.*"subject":"Re: Your order",.*"text":"Yes, Tuesday is fine.",.*"flags":\{"auto_reply":false,"list":false,"bounce":false,"own":false,"no_reply":false\},"defects":\[\]\}$' -- \
  "$ctl" inspect email "$mail/reply_en.eml" </dev/null
[ "$(wc -l <"$tmp/out")" -eq 1 ] && pass || fail "one JSON object on one line"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out" && pass || fail "output is JSON"
expect "KOI8-R decoded" 0 '"text":"Привет! Когда будет доставка\?"' -- "$ctl" inspect email "$mail/charset_koi8r.eml" </dev/null
expect "stdin" 0 '"subject":"注文"' -- "$ctl" inspect email - <"$mail/charset_iso2022jp.eml"
expect "attachments listed" 0 '"attachments":\[\{"name":"invoice.pdf","type":"application/pdf","size":1033\}\]' -- \
  "$ctl" inspect email "$mail/nested_mixed_alternative_related.eml" </dev/null
expect "defects printed, exit 0" 0 '"defects":\["unknown charset x-foo"\]' -- \
  "$ctl" inspect email "$mail/charset_unknown.eml" </dev/null
expect "gmail json" 0 '"subject":"testing"' -- "$ctl" inspect email --gmail-json "$mail/gmail_raw_simplified.gmail.json" </dev/null
expect "gmail json flag after the file" 0 '"subject":"testing"' -- \
  "$ctl" inspect email "$mail/gmail_raw_simplified.gmail.json" --gmail-json </dev/null
expect "gmail json that is a raw message" 1 'not JSON' -- "$ctl" inspect email --gmail-json "$mail/reply_en.eml" </dev/null
[ "$(wc -l <"$tmp/err")" -eq 1 ] && pass || fail "decode error is one line"
expect "empty message" 1 'not_a_message' -- "$ctl" inspect email "$mail/empty.eml" </dev/null
expect "missing file" 1 'cannot open' -- "$ctl" inspect email "$tmp/none.eml" </dev/null
expect "no file" 2 'usage: dispatchctl inspect email' -- "$ctl" inspect email </dev/null
expect "not email" 2 'usage: dispatchctl inspect email' -- "$ctl" inspect sms "$mail/reply_en.eml" </dev/null
expect "unknown flag" 2 'unknown option --bogus' -- "$ctl" inspect email "$mail/reply_en.eml" --bogus </dev/null

summary
