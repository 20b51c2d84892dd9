#!/usr/bin/env node
// The common Node.js alternative to dispatchd's validator, for bench/run-validator-bench.sh:
// regex fence strip (else first "{" .. last "}") + JSON.parse + an ajv-compiled validator
// on the catalog's JSON Schema (`dispatchctl catalog schema --dialect jsonschema`) + the
// recipient check for actions with a recipient policy, as dispatchd does.
//
//   node pipeline.js --schema FILE --catalog FILE --corpus FILE [--runs 7]
//
// ajv is not vendored: install it into a scratch folder (npm install --prefix DIR ajv@8)
// and point NODE_PATH at DIR/node_modules. Output matches validator_bench's format.
'use strict';

const fs = require('fs');
const Ajv = require('ajv');

function args() {
  const out = { runs: 7 };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!['schema', 'catalog', 'corpus', 'runs'].includes(key) || i + 1 >= argv.length) {
      console.error(`pipeline.js: bad option ${argv[i]}\nusage: node pipeline.js --schema FILE --catalog FILE --corpus FILE [--runs N]`);
      process.exit(2);
    }
    out[key] = key === 'runs' ? Number(argv[i + 1]) : argv[i + 1];
  }
  if (!out.schema || !out.catalog || !out.corpus || !(out.runs > 0)) {
    console.error('pipeline.js: --schema, --catalog and --corpus are required');
    process.exit(2);
  }
  return out;
}

const opts = args();
const schema = JSON.parse(fs.readFileSync(opts.schema, 'utf8'));
const catalog = JSON.parse(fs.readFileSync(opts.catalog, 'utf8'));
const actionField = catalog.action_field;
// action name -> the field that must name the conversation's counterpart
const recipientField = new Map();
for (const a of catalog.actions) {
  if (a.policy && a.policy.recipient_field) recipientField.set(a.name, a.policy.recipient_field);
}

const ajv = new Ajv({ allErrors: false });
const validateSchema = ajv.compile(schema);

const FENCE = /```(?:json)?[ \t]*\r?\n?([\s\S]*?)\r?\n?[ \t]*```/i;

function validate(reply, sender) {
  let text = reply;
  const fence = FENCE.exec(text);
  if (fence) {
    text = fence[1];
  } else {
    const first = text.indexOf('{');
    const last = text.lastIndexOf('}');
    if (first < 0 || last < first) return false;
    text = text.slice(first, last + 1);
  }
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    return false;
  }
  if (!validateSchema(value)) return false;
  const field = recipientField.get(value[actionField]);
  if (field !== undefined && value[field] !== sender) return false;
  return true;
}

const lines = fs.readFileSync(opts.corpus, 'utf8').split('\n').filter((l) => l.length > 0);
const replies = [], senders = [], intent = [], kinds = [];
let bytes = 0, intended = 0;
for (const line of lines) {
  const r = JSON.parse(line);
  replies.push(r.reply);
  senders.push(r.sender);
  intent.push(r.valid);
  kinds.push(r.kind);
  bytes += Buffer.byteLength(r.reply, 'utf8');
  if (r.valid) intended++;
}
const n = replies.length;

// Sanity pass (also the warm-up): every verdict must be the one the generator intended.
let accepted = 0, mismatches = 0;
for (let i = 0; i < n; i++) {
  const ok = validate(replies[i], senders[i]);
  if (ok) accepted++;
  if (ok !== intent[i] && ++mismatches <= 5) {
    console.error(`MISMATCH reply ${i} (${kinds[i]}): intended ${intent[i] ? 'accept' : 'reject'}, got ${ok ? 'accept' : 'reject'}\n  reply: ${replies[i].slice(0, 200)}`);
  }
}

const thousands = (v) => Math.round(v).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
console.log(`impl:     Node.js ${process.version} regex fence strip + JSON.parse + ajv ${require('ajv/package.json').version} + recipient check (single thread)`);
console.log(`corpus:   ${n} replies, ${(bytes / 1e6).toFixed(2)} MB, avg ${Math.round(bytes / n)} bytes/reply`);
console.log(`verdicts: accepted ${accepted}, rejected ${n - accepted} (generator intended ${intended} accepted, ${n - intended} rejected)${mismatches ? '' : ' ok'}`);
if (mismatches) {
  console.log(`FAIL: ${mismatches} verdicts differ from the generator's intent; no timing reported`);
  process.exit(1);
}

const ns = [];
for (let r = 0; r < opts.runs; r++) {
  let ok = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) if (validate(replies[i], senders[i])) ok++;
  const t1 = process.hrtime.bigint();
  ns.push(Number(t1 - t0));
  if (ok !== intended) {
    console.log(`FAIL: run ${r + 1} accepted ${ok}, intended ${intended}`);
    process.exit(1);
  }
}
const sorted = [...ns].sort((a, b) => a - b);
const runs = opts.runs;
const median = runs % 2 ? sorted[(runs - 1) / 2] : (sorted[runs / 2 - 1] + sorted[runs / 2]) / 2;
const per = median / n;
const rate = 1e9 / per;
console.log(`runs:     ${runs} x ${n} replies; ns/reply per run: ${ns.map((t) => Math.round(t / n)).join(' ')}`);
console.log(`median:   ${thousands(rate)} replies/s  ${per.toFixed(1)} ns/reply`);
console.log(`result replies_per_s=${Math.round(rate)} ns_per_reply=${per.toFixed(1)} accepted=${intended} rejected=${n - intended}`);
