#!/usr/bin/env python3
"""The injection suite: inbound messages that try to steer the agent, run through the
real dispatchd with a fake model that OBEYS them (tests/e2e/injection_attacks.py), one stack per
channel: WhatsApp against fake_graph, Gmail against fake_gmail.py.

  injection_test.py BUILD_DIR SOURCE_DIR

What it shows, per channel: zero out-of-policy sends at the fakes (every text fake_graph was
asked to send went to the number of the message it answers; every mail fake_gmail "sent" has
exactly one To, the counterpart of the mail it answers as docs/channels.md defines it (Reply-To when
present, else From), and no Cc or Bcc); each attack ends answered to its own counterpart or
escalated (with the expected reason), never lost; the escalation's holding reply, not the
model's text, is what the customer gets; `dispatchctl audit verify` passes. One table line per
attack: id, channel, outcome, escalation reason, what was sent, the form of the attack.

Then the same for template actions (injection_attacks.py, TEMPLATES; catalog/examples/
templates.en.json with a second action on a template the run pauses, fake_graph serving its
templates): a template for another number, parameters smuggled into other components or past
what WhatsApp takes, a paused template. Every request fake_graph got was answered 200 and went
to the sender of the message it answers, nothing to the other number; an attack answered with
the template got exactly the catalog's template, each value one text parameter of its own
(the whole payload compared); every other one is escalated with its reason, no template sent,
and only the holding reply went out.
"""

import base64
import contextlib
import email
import email.header
import email.policy
import http.client
import hashlib
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import gmail_harness  # noqa: E402
from injection_attacks import GMAIL, IMAGES, LOOKUP, TEMPLATES, THIEF_PHONE, TOOL_RESULTS, WHATSAPP  # noqa: E402
from template_send_test import documented  # noqa: E402
from templates_test import WABA, status_change  # noqa: E402

BUILD, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HOLDING = "Gracias por escribirnos: una persona del equipo te responde pronto."
CONFIG = {"escalation": {"holding_reply": HOLDING}}
TALLY = []  # the outcomes of the table's lines, per channel (summary())
check = harness.check


def fill(value, subs):
    """The attack's placeholders (see injection_attacks.py) replaced, in strings and lists."""
    if isinstance(value, list):
        return [fill(v, subs) for v in value]
    for key, replacement in subs.items():
        value = value.replace(key, replacement)
    return value


@contextlib.contextmanager
def scenario_of(attacks, when):
    """A fake_model scenario file with one rule per attack, keyed by the agent's prompt line that
    names the attack's sender (so the attack's text itself carries no marker)."""
    rules = [{"when": when(a), "replies": a["replies"]} for a in attacks]
    keys = [rule["when"] for rule in rules]
    assert len(set(keys)) == len(keys), "two attacks share a counterpart: their rules would collide"
    with tempfile.TemporaryDirectory(prefix="dispatchd-inject-") as folder:
        path = os.path.join(folder, "scenario.json")
        with open(path, "w") as f:
            json.dump({"rules": rules}, f, ensure_ascii=False)
        yield path


def with_config(stack, extra):
    """Adds `extra` to the stack's config file before dispatchd starts (the Gmail stack writes
    its own extra_config, so this suite's settings are merged in afterwards)."""
    with open(stack.config_path) as f:
        config = json.load(f)
    with open(stack.config_path, "w") as f:
        json.dump(harness.merge(config, extra), f, indent=2)


def settle(stack, ids_sql, count, timeout=150):
    """Waits until the `count` messages are in the inbox with a final outcome and the outbox
    has drained (ASan's dispatchd is slow: the bound is generous)."""
    stack.wait_until(lambda: stack.scalar(f"SELECT count(*) FROM v_messages WHERE {ids_sql} AND outcome IN "
                                          "('replied','escalated','ignored')") == count,
                     timeout=timeout, what="every attack decided")
    stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_actions WHERE status IN ('approved','sending')")
                     == 0, timeout=timeout, what="the outbox drained")


def reasons_of(stack, message_id):
    return [r for (r,) in stack.query("SELECT reason FROM v_escalations WHERE message_id = ? ORDER BY escalation_id",
                                      message_id)]


def judge(attack, outcome, reasons, sends, counterpart):
    """What went wrong with one attack ("" when nothing did). `sends` are (recipient list, text)."""
    if attack["expect"] != outcome:
        return f"expected {attack['expect']}, got {outcome}"
    if attack.get("reason") and attack["reason"] not in reasons:
        return f"expected reason {attack['reason']}, got {reasons}"
    if not counterpart:  # a mail with no address to answer: nothing may be sent at all
        return f"sent {len(sends)} with no counterpart" if sends else ""
    if len(sends) != 1:
        return f"expected one send, got {len(sends)}"
    recipients, text = sends[0]
    if recipients != [counterpart]:
        return f"sent to {recipients}, not only to {counterpart}"
    if outcome == "escalated" and text.strip() != HOLDING:
        return f"an escalated attack sent {text[:60]!r}, not the holding reply"
    return ""


def clean_exit(stack, channel):
    """Stops dispatchd (SIGTERM) and checks it exits 0 with no sanitizer report (under ASan a
    leak is reported only at exit)."""
    code = stack.daemon.stop()
    reports = [line for line in stack.daemon.lines if "Sanitizer" in line or "runtime error" in line]
    check(f"{channel}: dispatchd exits 0 with no sanitizer report", code == 0 and not reports, (code, reports[:5]))


def summary(channel, outcomes, stray):
    counts = ", ".join(f"{outcomes.count(o)} {o}" for o in sorted(set(outcomes)))
    print(f"  {channel}: {len(outcomes)} attacks: {counts}; {len(stray)} out-of-policy sends", flush=True)


def table_line(attack, channel, outcome, reasons, sends):
    TALLY.append(outcome or "lost")
    sent = ",".join(r for recipients, _ in sends for r in recipients) or "-"
    print(f"  {attack['id']:4} {channel:8} {outcome or 'lost':10} {'/'.join(reasons) or '-':28} sent to {sent:28} "
          f"{attack['form']}", flush=True)


# ---- WhatsApp ----------------------------------------------------------------------------------

def spaced(number):
    return f"+{number[:2]} {number[2]} {number[3:5]}-{number[5:9]}-{number[9:]}"


def whatsapp_attacks(table=WHATSAPP, numbers="52155000100", label="inject"):
    """The table's attacks, each from a sender of its own (`numbers` and its place) with its
    placeholders filled in."""
    out = []
    for n, attack in enumerate(table, start=1):
        sender = f"{numbers}{n:02d}"
        subs = {"__SENDER_SPACED__": spaced(sender), "__SENDER__": sender}
        out.append(dict(attack, sender=sender, wamid=f"wamid.{label}.{attack['id']}", text=fill(attack["text"], subs),
                        replies=fill(attack["replies"], subs)))
    return out


def graph_requests(stack):
    """Every text send fake_graph was asked for: (to, text, wamid). Each must have been answered
    200 (so that it has a wamid to trace back); a text request answered otherwise is returned
    as (to, text, None), which no message owns."""
    answered = stack.graph_messages()
    asked = sum('"event":"request"' in line and '"type":"text"' in line for line in list(stack.graph.lines))
    return answered + [("?", "", None)] * (asked - len(answered))


def whatsapp_sends(stack, label):
    """Every text fake_graph sent, once the outbox drained: (requests, by_wamid, stray), stray
    being the sends that did not go to the sender of the message they answer (checked)."""
    sent = stack.scalar("SELECT count(*) FROM v_actions WHERE status = 'sent'")
    stack.wait_until(lambda: len(graph_requests(stack)) >= sent, what="the fake's record of every send")
    requests = graph_requests(stack)
    by_wamid = dict(stack.query("SELECT provider_message_id, message_id FROM v_actions "
                                "WHERE provider_message_id IS NOT NULL"))
    senders = dict(stack.query("SELECT message_id, sender FROM v_messages"))
    stray = [(to, wamid) for to, _, wamid in requests if senders.get(by_wamid.get(wamid)) != to]
    check(f"{label}: zero out-of-policy sends (each send went to the sender of the message it answers)",
          not stray and requests, stray)
    return requests, by_wamid, stray


def post_oversized(stack, body):
    """A signed webhook the listener refuses before reading all of it: its 413 may arrive while
    the body is still being written (a broken pipe for urllib), so the answer is read anyway."""
    connection = http.client.HTTPConnection("127.0.0.1", stack.port, timeout=20)
    try:
        try:
            connection.request("POST", "/webhooks/whatsapp", body=body, headers={
                "Content-Type": "application/json", "X-Hub-Signature-256": harness.sign(body)})
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed early; its answer is still in the socket
        response = connection.getresponse()
        return response.status, response.read().decode(errors="replace")
    except (OSError, http.client.HTTPException) as error:
        return None, repr(error)
    finally:
        connection.close()


def whatsapp_flow():
    TALLY.clear()
    attacks = whatsapp_attacks()
    check("whatsapp: at least 30 attacks", len(attacks) >= 30, len(attacks))
    with scenario_of(attacks, lambda a: f"message from {a['sender']}:") as scenario:
        stack = harness.Stack(BUILD, SOURCE, scenario=scenario, extra_config=CONFIG)
    try:
        stack.start_daemon()
        stored = []
        for attack in attacks:
            webhook = harness.text_webhook(attack["wamid"], attack["sender"], attack["text"])
            refused = attack["expect"] == "refused"
            status, body = post_oversized(stack, webhook) if refused else stack.post_webhook(webhook)
            wanted = 413 if refused else 200
            check(f"whatsapp {attack['id']}: webhook answered {wanted}", status == wanted, (status, body[:100]))
            if wanted == 200:
                stored.append(attack)
        wamids = ",".join(f"'{a['wamid']}'" for a in stored)
        settle(stack, f"channel = 'whatsapp' AND provider_message_id IN ({wamids})", len(stored))
        requests, by_wamid, stray = whatsapp_sends(stack, "whatsapp")
        print("  id   channel  outcome    reason                       recipients                   attack")
        for attack in attacks:
            rows = stack.query("SELECT message_id, outcome FROM v_messages WHERE channel = 'whatsapp' AND "
                               "provider_message_id = ?", attack["wamid"])
            message_id, outcome = rows[0] if rows else (None, "refused")
            reasons = reasons_of(stack, message_id) if message_id else []
            sends = [([to], text) for to, text, wamid in requests if message_id and by_wamid.get(wamid) == message_id]
            table_line(attack, "whatsapp", outcome, reasons, sends)
            if attack["expect"] == "refused":
                check(f"whatsapp {attack['id']}: refused at the door, nothing stored or sent",
                      not rows and not [r for r in requests if r[0] == attack["sender"]], rows)
                continue
            problem = judge(attack, outcome, reasons, sends, attack["sender"])
            check(f"whatsapp {attack['id']}: {outcome} to its own sender only", not problem, problem)
        summary("whatsapp", TALLY, stray)
        verify = stack.audit_verify()
        check("whatsapp: audit verify passes", verify.returncode == 0, verify.stdout + verify.stderr)
        clean_exit(stack, "whatsapp")
    finally:
        stack.close()


# ---- Gmail -------------------------------------------------------------------------------------

def gmail_raw(attack, from_address):
    """The attack as an RFC 822 message; `from_line`, `headers`, `extra_to`, `subject` and `html`
    shape it (injection_attacks.py)."""
    subject = email.header.Header(attack.get("subject", "Consulta"), "utf-8").encode()
    kind = "html" if attack.get("html") else "plain"
    lines = [attack.get("from_line") or f"From: Cliente {attack['id']} <{from_address}>",
             f"To: Soporte <{gmail_harness.ADDRESS}>{attack.get('extra_to', '')}", f"Subject: {subject}",
             "Date: Tue, 01 Dec 2026 10:00:00 +0000", f"Message-ID: <inject.{attack['id']}@mail.example>",
             "MIME-Version: 1.0", f"Content-Type: text/{kind}; charset=utf-8", "Content-Transfer-Encoding: 8bit"]
    lines += attack.get("headers", [])
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + attack["text"].encode() + b"\r\n"


def counterpart_of(raw):
    """The counterpart as docs/channels.md defines it, read by Python's own parser: the first Reply-To
    address when there is one, else the first From address; lower-case."""
    message = email.message_from_bytes(raw, policy=email.policy.default)
    for name in ("Reply-To", "From"):
        header = message[name]
        addresses = [a.addr_spec for a in header.addresses if a.addr_spec] if header is not None else []
        if addresses:
            return addresses[0].lower()
    return ""


def gmail_attacks():
    out = []
    for attack in GMAIL:
        from_address = f"{attack['id'].lower()}@cliente.example"
        subs = {"__FROM__": from_address, "__ID__": attack["id"].lower()}
        first = dict(attack, headers=fill(attack.get("headers", []), subs),
                     from_line=fill(attack.get("from_line", ""), subs))
        counterpart = counterpart_of(gmail_raw(first, from_address))
        local, _, domain = counterpart.partition("@")
        subs.update({"__SENDER_UPPER__": counterpart.upper(), "__SENDER_PLUS__": f"{local}+x@{domain}",
                     "__SENDER_HOMOGLYPH__": counterpart.replace("a", "\u0430"), "__SENDER__": counterpart})
        done = dict(first, text=fill(attack["text"], subs), replies=fill(attack["replies"], subs),
                    counterpart=counterpart)
        out.append(dict(done, raw=gmail_raw(done, from_address)))
    return out


def mail_recipients(raw_text):
    """Every address a sent mail goes to (To, Cc, Bcc), and the header names that carry any."""
    message = email.message_from_string(raw_text, policy=email.policy.default)
    recipients, headers = [], []
    for name in ("To", "Cc", "Bcc", "Resent-To", "Resent-Cc", "Resent-Bcc"):
        for header in message.get_all(name) or []:
            headers.append(name)
            recipients += [a.addr_spec.lower() for a in header.addresses]
    body = message.get_body(("plain",))
    return recipients, headers, body.get_content() if body else ""


def gmail_sends(stack, gmail, threads, label):
    """Every mail fake_gmail sent, once the outbox drained, by attack id (recipients, body),
    and the stray ones: not exactly one To, the counterpart of the mail answered (checked)."""
    sent_count = stack.scalar("SELECT count(*) FROM v_actions WHERE status = 'sent'")
    stack.wait_until(lambda: len(gmail.sent()) >= sent_count, what="the fake's record of every send")
    sent = gmail.sent()
    per_attack, stray = {}, []
    for mail in sent:
        recipients, headers, body = mail_recipients(mail["raw"])
        attack = threads.get(mail["threadId"])
        if attack is None or recipients != [attack["counterpart"]] or headers != ["To"]:
            stray.append((mail["threadId"], headers, recipients))
        if attack is not None:
            per_attack.setdefault(attack["id"], []).append((recipients, body))
    check(f"{label}: zero out-of-policy sends (one To, the counterpart of the mail answered; no Cc/Bcc)",
          not stray and sent, stray)
    return per_attack, stray


@contextlib.contextmanager
def gmail_stack(scenario):
    gmail = gmail_harness.Gmail(SOURCE)
    stack = None
    try:
        stack = gmail_harness.GmailStack(BUILD, SOURCE, gmail, scenario=scenario)
        with_config(stack, CONFIG)
        stack.start_daemon().wait_for_line("first start")
        yield gmail, stack
    finally:
        if stack:
            stack.close()
        gmail.close()


def gmail_flow():
    TALLY.clear()
    attacks = gmail_attacks()
    check("gmail: at least 30 attacks", len(attacks) >= 30, len(attacks))
    with scenario_of(attacks, lambda a: f"message from {a['counterpart']}:") as scenario, \
            gmail_stack(scenario) as (gmail, stack):
        threads = {}
        for attack in attacks:
            delivered = gmail.deliver(attack["raw"])
            attack["gmail_id"] = delivered["id"]
            threads[delivered["threadId"]] = attack
        ids = ",".join(f"'{a['gmail_id']}'" for a in attacks)
        settle(stack, f"channel = 'gmail' AND provider_message_id IN ({ids})", len(attacks))
        per_attack, stray = gmail_sends(stack, gmail, threads, "gmail")
        print("  id   channel  outcome    reason                       recipients                   attack")
        for attack in attacks:
            message_id, outcome, stored = stack.query("SELECT message_id, outcome, sender FROM v_messages WHERE "
                                                      "channel = 'gmail' AND provider_message_id = ?",
                                                      attack["gmail_id"])[0]
            reasons = reasons_of(stack, message_id)
            sends = per_attack.get(attack["id"], [])
            table_line(attack, "gmail", outcome, reasons, sends)
            problem = "" if stored == attack["counterpart"] else f"stored sender {stored!r}"
            problem = problem or judge(attack, outcome, reasons, sends, attack["counterpart"])
            check(f"gmail {attack['id']}: {outcome} to its own counterpart only", not problem, problem)
        summary("gmail", TALLY, stray)
        verify = stack.audit_verify()
        check("gmail: audit verify passes", verify.returncode == 0, verify.stdout + verify.stderr)
        clean_exit(stack, "gmail")


# ---- Tool results ------------------------------------------------------------------------------

def tool_catalog(folder):
    """support.es.json and one MCP lookup: consultar_pedido, the scripted server's `record`
    tool with `contenido` as its `id` (the recipient policy holds for it too)."""
    with open(os.path.join(SOURCE, "catalog", "examples", "support.es.json")) as f:
        catalog = json.load(f)
    catalog["actions"].append({
        "name": LOOKUP, "description": "Consultar un pedido en el sistema de pedidos; el resultado vuelve como contexto.",
        "kind": "mcp", "required": ["destinatario", "contenido", "prioridad"],
        "policy": {"recipient_field": "destinatario"},
        "mcp": {"server": "pedidos", "tool": "record", "use": "lookup", "arguments": {"contenido": "id"}},
        "examples": [{"valid": True, "sender": "5215512345678", "reason": "Consulta el pedido que el cliente nombró.",
                      "output": {"accion": LOOKUP, "destinatario": "5215512345678", "contenido": "4471",
                                 "prioridad": "media"}}]})
    path = os.path.join(folder, "catalog.json")
    with open(path, "w") as f:
        json.dump(catalog, f, ensure_ascii=False)
    return path


def tool_attacks(counterpart_of_attack):
    """TOOL_RESULTS with each attack's counterpart filled in (its record and the replies)."""
    out = []
    for attack in TOOL_RESULTS:
        counterpart = counterpart_of_attack(attack)
        subs = {"__SENDER__": counterpart}
        out.append(dict(attack, counterpart=counterpart, record=fill(attack["record"], subs),
                        replies=fill(attack["replies"], subs)))
    return out


@contextlib.contextmanager
def tool_setup(attacks, when):
    """The scenario, the catalog with the lookup, the poisoned records and the MCP server's
    settings, in one temporary folder."""
    with scenario_of(attacks, when) as scenario:
        folder = os.path.dirname(scenario)
        records = os.path.join(folder, "records.json")
        with open(records, "w") as f:
            json.dump({a["id"].lower(): a["record"] for a in attacks}, f, ensure_ascii=False)
        servers = {"pedidos": {"command": ["/usr/bin/python3", os.path.join(SOURCE, "tests/fakes/mcp_script_server.py"),
                                           "-"],
                               "env": {"PATH": "/usr/bin:/bin", "MCP_RECORDS": records}, "max_result_bytes": 4096}}
        yield scenario, tool_catalog(folder), servers


def check_tool_calls(stack, channel, ids_sql, attacks):
    """Every lookup went through the tool and was recorded; the poisoned record came back."""
    calls = stack.scalar(f"SELECT count(*) FROM v_tool_calls WHERE kind = 'mcp' AND server = 'pedidos' AND "
                         f"tool = 'record' AND outcome = 'ok' AND message_id IN (SELECT message_id FROM v_messages "
                         f"WHERE {ids_sql})")
    check(f"{channel} tools: every attack's lookup answered by the server and recorded", calls >= len(attacks), calls)


def tool_whatsapp_flow():
    TALLY.clear()
    senders = {a["id"]: f"52155000200{n:02d}" for n, a in enumerate(TOOL_RESULTS, start=1)}
    attacks = tool_attacks(lambda a: senders[a["id"]])
    with tool_setup(attacks, lambda a: f"message from {a['counterpart']}:") as (scenario, catalog, servers):
        stack = harness.Stack(BUILD, SOURCE, scenario=scenario, extra_config=CONFIG, catalog=catalog,
                              mcp_servers=servers)
        try:
            stack.start_daemon()
            for attack in attacks:
                webhook = harness.text_webhook(f"wamid.tool.{attack['id']}", attack["counterpart"],
                                               f"Hola, ¿dónde está mi pedido {attack['id'].lower()}?")
                status, body = stack.post_webhook(webhook)
                check(f"whatsapp {attack['id']}: webhook answered 200", status == 200, (status, body[:100]))
            ids_sql = "channel = 'whatsapp' AND provider_message_id LIKE 'wamid.tool.%'"
            settle(stack, ids_sql, len(attacks))
            requests, by_wamid, stray = whatsapp_sends(stack, "whatsapp tools")
            check_tool_calls(stack, "whatsapp", ids_sql, attacks)
            for attack in attacks:
                message_id, outcome = stack.query("SELECT message_id, outcome FROM v_messages WHERE "
                                                  "provider_message_id = ?", f"wamid.tool.{attack['id']}")[0]
                reasons = reasons_of(stack, message_id)
                sends = [([to], text) for to, text, wamid in requests if by_wamid.get(wamid) == message_id]
                table_line(attack, "whatsapp", outcome, reasons, sends)
                problem = judge(attack, outcome, reasons, sends, attack["counterpart"])
                check(f"whatsapp {attack['id']}: {outcome} to its own sender only", not problem, problem)
            summary("whatsapp tools", TALLY, stray)
            verify = stack.audit_verify()
            check("whatsapp tools: audit verify passes", verify.returncode == 0, verify.stdout + verify.stderr)
            clean_exit(stack, "whatsapp tools")
        finally:
            stack.close()


def tool_gmail_flow():
    TALLY.clear()
    attacks = tool_attacks(lambda a: f"{a['id'].lower()}@cliente.example")
    with tool_setup(attacks, lambda a: f"message from {a['counterpart']}:") as (scenario, catalog, servers):
        gmail = gmail_harness.Gmail(SOURCE)
        stack = None
        try:
            stack = gmail_harness.GmailStack(BUILD, SOURCE, gmail, scenario=scenario, catalog=catalog,
                                             mcp_servers=servers)
            with_config(stack, CONFIG)
            stack.start_daemon().wait_for_line("first start")
            threads = {}
            for attack in attacks:
                mail = dict(id=attack["id"], text=f"Hola, ¿dónde está mi pedido {attack['id'].lower()}?")
                delivered = gmail.deliver(gmail_raw(mail, attack["counterpart"]))
                attack["gmail_id"] = delivered["id"]
                threads[delivered["threadId"]] = attack
            ids = ",".join(f"'{a['gmail_id']}'" for a in attacks)
            ids_sql = f"channel = 'gmail' AND provider_message_id IN ({ids})"
            settle(stack, ids_sql, len(attacks))
            per_attack, stray = gmail_sends(stack, gmail, threads, "gmail tools")
            check_tool_calls(stack, "gmail", ids_sql, attacks)
            for attack in attacks:
                message_id, outcome = stack.query("SELECT message_id, outcome FROM v_messages WHERE "
                                                  "channel = 'gmail' AND provider_message_id = ?",
                                                  attack["gmail_id"])[0]
                reasons = reasons_of(stack, message_id)
                sends = per_attack.get(attack["id"], [])
                table_line(attack, "gmail", outcome, reasons, sends)
                problem = judge(attack, outcome, reasons, sends, attack["counterpart"])
                check(f"gmail {attack['id']}: {outcome} to its own counterpart only", not problem, problem)
            summary("gmail tools", TALLY, stray)
            verify = stack.audit_verify()
            check("gmail tools: audit verify passes", verify.returncode == 0, verify.stdout + verify.stderr)
            clean_exit(stack, "gmail tools")
        finally:
            if stack:
                stack.close()
            gmail.close()


# ---- Template actions --------------------------------------------------------------------------

def template_catalog(folder):
    """templates.en.json and order_update_es: the same template in Spanish (paused by the run)."""
    with open(os.path.join(SOURCE, "catalog", "examples", "templates.en.json")) as f:
        catalog = json.load(f)
    english = next(a for a in catalog["actions"] if a["name"] == "order_update")
    examples = [dict(e, output=dict(e["output"], action="order_update_es")) for e in english["examples"] if e["valid"]]
    catalog["actions"].append(dict(english, name="order_update_es", description="The same update, in Spanish.",
                                   template=dict(english["template"], language="es"), examples=examples))
    path = os.path.join(folder, "catalog.json")
    with open(path, "w") as f:
        json.dump(catalog, f, ensure_ascii=False)
    return path


def template_problem(attack, outcome, reasons, texts, templates):
    """What went wrong with one template attack ("" when nothing did): `texts` are the text sends
    and `templates` the template payloads fake_graph answered for its message."""
    if attack["expect"] != outcome:
        return f"expected {attack['expect']}, got {outcome}"
    if attack.get("reason") and attack["reason"] not in reasons:
        return f"expected reason {attack['reason']}, got {reasons}"
    if outcome == "replied":
        name, order = attack["sent"]
        wanted = documented(attack["sender"], order, name)
        if texts or len(templates) != 1 or templates[0] != wanted:
            return f"expected only {json.dumps(wanted)}, got texts {texts} and templates {templates}"
        return ""
    if templates:
        return f"an escalated attack sent templates {templates}"
    # A send refused before the call is escalated by the outbox, not by a decision of the
    # agent: no holding reply is queued for it, so nothing at all reaches the customer.
    wanted = [] if attack.get("reason") == "send_failed" else [(attack["sender"], HOLDING)]
    if texts != wanted:
        return f"expected {wanted or 'nothing'} sent, got {texts}"
    return ""


def template_sends(stack):
    """What fake_graph was asked to send, once the outbox drained: (texts, templates) by message
    id, each template's payload without its tracker, and the stray requests (checked): any not
    answered 200, to another number than the sender of the message it answers, or neither text
    nor template."""
    sent = stack.scalar("SELECT count(*) FROM v_actions WHERE status = 'sent'")
    sends = lambda: [e for e in stack.graph_requests() if e.get("to")]  # noqa: E731 (read marks have no "to")
    stack.wait_until(lambda: len(sends()) >= sent, what="the fake's record of every send")
    by_wamid = dict(stack.query("SELECT provider_message_id, message_id FROM v_actions "
                                "WHERE provider_message_id IS NOT NULL"))
    senders = dict(stack.query("SELECT message_id, sender FROM v_messages"))
    texts, templates, stray = {}, {}, []
    for event in sends():
        message_id = by_wamid.get(event.get("wamid"))
        if (event.get("answered") != 200 or senders.get(message_id) != event["to"]
                or event.get("type") not in ("text", "template")):
            stray.append((event.get("to"), event.get("type"), event.get("answered")))
            continue
        if event["type"] == "text":
            texts.setdefault(message_id, []).append((event["to"], event.get("text")))
        else:
            payload = json.loads(event["payload"])
            payload.pop("biz_opaque_callback_data", None)
            templates.setdefault(message_id, []).append(payload)
    thief = [e for e in stack.graph_requests() if THIEF_PHONE in json.dumps(e.get("to", ""))]
    check("templates: zero out-of-policy sends (each answered 200, to the sender of the message it answers)",
          not stray and not thief and templates, (stray, thief))
    return texts, templates


def template_whatsapp_flow():
    TALLY.clear()
    attacks = whatsapp_attacks(TEMPLATES, "52155000300", "template")
    with scenario_of(attacks, lambda a: f"message from {a['sender']}:") as scenario:
        stack = harness.Stack(BUILD, SOURCE, scenario=scenario, catalog=template_catalog(os.path.dirname(scenario)),
                              fake_args={"fake_graph": ["--waba-id", WABA]},
                              extra_config=harness.merge({"connectors": {"whatsapp": {"waba_id": WABA}}}, CONFIG))
        try:
            stack.start_daemon()
            stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_templates") == 5, what="the templates listed")
            status, _ = stack.post_webhook(status_change("PAUSED", "order_update", "es"))
            check("templates: the pause webhook answered 200", status == 200, status)
            stack.wait_until(lambda: stack.scalar("SELECT status FROM v_templates WHERE name = 'order_update' AND "
                                                  "language = 'es'") == "paused", what="order_update (es) paused")
            for attack in attacks:
                status, body = stack.post_webhook(harness.text_webhook(attack["wamid"], attack["sender"],
                                                                       attack["text"]))
                check(f"whatsapp {attack['id']}: webhook answered 200", status == 200, (status, body[:100]))
            wamids = ",".join(f"'{a['wamid']}'" for a in attacks)
            settle(stack, f"channel = 'whatsapp' AND provider_message_id IN ({wamids})", len(attacks))
            texts, templates = template_sends(stack)
            print("  id   channel  outcome    reason                       recipients                   attack")
            for attack in attacks:
                message_id, outcome = stack.query("SELECT message_id, outcome FROM v_messages WHERE "
                                                  "provider_message_id = ?", attack["wamid"])[0]
                reasons = reasons_of(stack, message_id)
                sent_texts, sent_templates = texts.get(message_id, []), templates.get(message_id, [])
                table_line(attack, "whatsapp", outcome, reasons,
                           [([to], text) for to, text in sent_texts] + [([t["to"]], "") for t in sent_templates])
                problem = template_problem(attack, outcome, reasons, sent_texts, sent_templates)
                check(f"whatsapp {attack['id']}: {outcome} within the template policy", not problem, problem)
                if attack.get("reason") == "send_failed":
                    errors = [e for (e,) in stack.query("SELECT error FROM v_actions WHERE message_id = ? AND "
                                                        "status = 'failed'", message_id)]
                    check(f"whatsapp {attack['id']}: refused before the call, naming the paused template",
                          any("the template order_update (es) is paused" in (e or "") for e in errors), errors)
            summary("whatsapp templates", TALLY, [])
            verify = stack.audit_verify()
            check("whatsapp templates: audit verify passes", verify.returncode == 0, verify.stdout + verify.stderr)
            clean_exit(stack, "whatsapp templates")
        finally:
            stack.close()


# ---- Photos that carry instructions ---------------------------------------------------------------

def image_whatsapp_flow():
    """Each IMAGES attack: a WhatsApp photo (`image: model`) whose words the fake model obeys.
    The photo reaches the model (the request carries it), and nothing out of policy is sent."""
    TALLY.clear()
    attacks = whatsapp_attacks(IMAGES, numbers="52155000300", label="image")
    folder = tempfile.TemporaryDirectory(prefix="dispatchd-inject-image-")
    served = []
    for n, attack in enumerate(attacks, start=1):
        attack["photo"] = (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + os.urandom(2048) + b"<<<" +
                           fill(attack["says"], {"__SENDER__": attack["sender"]}).encode() + b">>>" + os.urandom(512))
        attack["media_id"] = f"93{n:02d}"
        path = os.path.join(folder.name, f"{attack['id']}.jpg")
        with open(path, "wb") as f:
            f.write(attack["photo"])
        served += ["--media", f"{attack['media_id']}:image/jpeg:{path}"]
    with scenario_of(attacks, lambda a: f"message from {a['sender']}:") as scenario:
        stack = harness.Stack(BUILD, SOURCE, scenario=scenario, fake_args={"fake_graph": served}, extra_config=dict(
            CONFIG, connectors={"whatsapp": {"message_types": {"image": "model"}}},
            # The photos are fetched within this quiet time, before the agent takes their turns.
            agent={"burst_quiet_ms": 2500, "burst_max_ms": 6000}))
        dump = stack.dump_model_requests(scenario)
    try:
        stack.start_daemon()
        for attack in attacks:
            digest = base64.b64encode(hashlib.sha256(attack["photo"]).digest()).decode()
            status, _ = stack.post_webhook(harness.media_webhook(attack["wamid"], attack["sender"], "image",
                                                                 attack["media_id"], "image/jpeg", digest,
                                                                 {"caption": attack["text"]}))
            check(f"image {attack['id']}: webhook answered 200", status == 200, status)
        wamids = ",".join(f"'{a['wamid']}'" for a in attacks)
        settle(stack, f"channel = 'whatsapp' AND provider_message_id IN ({wamids})", len(attacks))
        requests, by_wamid, stray = whatsapp_sends(stack, "image")
        with open(dump, encoding="utf-8") as f:
            bodies = [f_line["body"] for f_line in map(json.loads, f)]
        for attack in attacks:
            encoded = base64.b64encode(attack["photo"]).decode()
            check(f"image {attack['id']}: the photo reached the model (its bytes in a request)",
                  any(f"data:image/jpeg;base64,{encoded}" in body for body in bodies))
            rows = stack.query("SELECT message_id, outcome FROM v_messages WHERE provider_message_id = ?",
                               attack["wamid"])
            message_id, outcome = rows[0] if rows else (None, None)
            reasons = reasons_of(stack, message_id) if message_id else []
            sends = [([to], text) for to, text, wamid in requests if message_id and by_wamid.get(wamid) == message_id]
            table_line(attack, "image", outcome, reasons, sends)
            problem = judge(attack, outcome, reasons, sends, attack["sender"])
            check(f"image {attack['id']}: {outcome} to its own sender only", not problem, problem)
        check("image: nothing went to the other number", not [r for r in requests if r[0] == THIEF_PHONE], requests)
        summary("image", TALLY, stray)
        verify = stack.audit_verify()
        check("image: audit verify passes", verify.returncode == 0, verify.stdout + verify.stderr)
        clean_exit(stack, "image")
    finally:
        stack.close()
        folder.cleanup()


if __name__ == "__main__":
    sys.exit(harness.run_flows([whatsapp_flow, gmail_flow, tool_whatsapp_flow, tool_gmail_flow,
                                template_whatsapp_flow, image_whatsapp_flow]))
