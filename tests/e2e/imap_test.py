#!/usr/bin/env python3
"""End to end: the real dispatchd reading a real Dovecot over IMAP and answering through a real
Postfix (tests/mail/servers.sh), with fake_model and fake_graph, on 127.0.0.1.

  imap_test.py BUILD_DIR SOURCE_DIR

What it shows: mail delivered through Postfix into the support mailbox is stored soon after
(IDLE), answered in its thread (In-Reply-To, References, Re:) and the reply lands in the
customer's mailbox and in our Sent folder; the original gets the handled flag; an auto-reply and
a bounce are recorded and ignored; an ISO-8859-1 message is decoded; WhatsApp works alongside;
200 messages delivered in a burst are each stored once; a mail's attachments (a base64 PDF, a
quoted-printable text, a PDF-only mail) kept with their bytes, fetched by UID and section; 20 SIGKILLs mid-poll and mid-send lose and
duplicate nothing (each message stored once, answered at most once, and every one answered or
escalated); Dovecot restarted with the mailbox rebuilt (a new UIDVALIDITY): nothing stored or
answered twice, new mail answered; a wrong password pauses the channel with its reason on /readyz
while WhatsApp and Gmail keep working, and SIGHUP with the right one resumes it.

Exits 77 (CTest's skip) when the servers cannot run here (no packages, not root).
IMAP_E2E_ONLY=kill in the environment runs the SIGKILL flow alone (to run it again and again);
IMAP_E2E_ONLY=media the attachments' flow alone."""

import glob
import os
import random
import shutil
import signal
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "mail"))
import gmail_harness  # noqa: E402
import harness  # noqa: E402
from imap_harness import Mail, imap_config, kick, mail, servers, start_pair, stop_pair  # noqa: E402

BUILD, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
SCENARIO = os.path.join(SOURCE, "tests", "e2e", "scenario.json")
check = harness.check
SKIP = 77


class ImapStack(harness.Stack):
    """The password comes from a $CREDENTIALS_DIRECTORY file, so a reload can read a new one."""

    def __init__(self, env, password=None, **options):
        super().__init__(BUILD, SOURCE, extra_config=imap_config(env), scenario=SCENARIO, **options)
        self.credentials = os.path.join(self.dir, "credentials")
        os.makedirs(self.credentials)
        self.write_password(password or env["SUPPORT_PASSWORD"])
        self.env["CREDENTIALS_DIRECTORY"] = self.credentials

    def write_password(self, value):
        with open(os.path.join(self.credentials, "IMAP_SOPORTE_PASSWORD"), "w") as f:
            f.write(value + "\n")

    def row(self, message_id):
        rows = self.query("SELECT outcome, message_type, text, received_at FROM v_messages WHERE channel = 'imap'"
                          " AND provider_message_id = ?", f"soporte:{message_id}@example.test")
        return rows[0] if rows else None

    def wait_row(self, message_id, done=lambda r: r[0] not in (None, "pending"), timeout=30.0):
        try:
            self.wait_until(lambda: self.row(message_id) is not None and done(self.row(message_id)), timeout=timeout,
                            what=f"the inbox row of {message_id}")
        except AssertionError:
            if self.daemon:
                print("  dispatchd's log (last 30 lines):\n    " + "\n    ".join(self.daemon.lines[-30:]), flush=True)
            raise
        return self.row(message_id)


def main_flow(env, box):
    box.create(env["SUPPORT_USER"], env["SUPPORT_PASSWORD"], "Sent")
    stack = ImapStack(env)
    try:
        daemon = stack.start_daemon()
        daemon.wait_for_line("first start", timeout=30)
        began = time.monotonic()
        box.deliver([mail(box.customer, box.support, "Envío a Monterrey",
                          "Hola,\n¿Tienen envío a Monterrey?\n\nGracias", message_id="pregunta-1")])
        stack.wait_row("pregunta-1", done=lambda r: True)
        print(f"  delivered to stored: {time.monotonic() - began:.2f} s (IDLE)", flush=True)
        outcome = stack.wait_row("pregunta-1")[0]
        check("new mail: answered", outcome == "replied", outcome)
        stack.wait_until(lambda: any("Monterrey" in str(m["Subject"]) for _, m in
                                     box.messages(env["CUSTOMER_USER"], env["CUSTOMER_PASSWORD"])),
                         what="the reply in the customer's mailbox")
        reply = [m for _, m in box.messages(env["CUSTOMER_USER"], env["CUSTOMER_PASSWORD"])
                 if "Monterrey" in str(m["Subject"])][0]
        check("reply: to the customer, from us", reply["To"].addresses[0].addr_spec == box.customer and
              reply["From"].addresses[0].addr_spec == box.support, (str(reply["To"]), str(reply["From"])))
        check("reply: Re: subject", str(reply["Subject"]) == "Re: Envío a Monterrey", str(reply["Subject"]))
        check("reply: In-Reply-To and References name the original",
              str(reply["In-Reply-To"]).strip() == "<pregunta-1@example.test>" and
              "<pregunta-1@example.test>" in str(reply["References"]), (reply["In-Reply-To"], reply["References"]))
        check("reply: our own Message-ID", str(reply["Message-ID"]).startswith("<dispatchd."), reply["Message-ID"])
        sent = box.messages(env["SUPPORT_USER"], env["SUPPORT_PASSWORD"], "Sent")
        check("reply: filed in Sent, seen", len(sent) == 1 and "\\Seen" in sent[0][0] and
              sent[0][1]["Message-ID"] == reply["Message-ID"], [(f, m["Message-ID"]) for f, m in sent])
        stack.wait_until(lambda: any("$Dispatchd" in f for f, m in
                                     box.messages(env["SUPPORT_USER"], env["SUPPORT_PASSWORD"])
                                     if "pregunta-1" in str(m["Message-ID"])), what="the handled flag")
        check("original: flagged $Dispatchd once stored", True)

        ignored = {"auto_reply": mail(box.customer, box.support, "Fuera de la oficina", "Estoy de vacaciones",
                                      ["Auto-Submitted: auto-replied"], message_id="auto-1"),
                   "bounce": mail("MAILER-DAEMON@example.test", box.support, "Undelivered Mail Returned to Sender",
                                  "No se entregó", message_id="bounce-1")}
        box.deliver([ignored["auto_reply"]])
        box.deliver([ignored["bounce"]], sender="")
        box.deliver([mail(box.customer, box.support, "Pedido", "¿Tienen envío a Mérida? Gracias, José",
                          charset="iso-8859-1", message_id="latin-1")])
        for kind, message_id in (("auto_reply", "auto-1"), ("bounce", "bounce-1")):
            outcome, why, _, _ = stack.wait_row(message_id)
            check(f"loop prevention: {kind} recorded with its reason and ignored", outcome == "ignored" and why == kind,
                  (outcome, why))
        outcome, _, text, _ = stack.wait_row("latin-1")
        check("ISO-8859-1 mail: decoded to UTF-8 for the model and answered",
              outcome == "replied" and "¿Tienen envío a Mérida? Gracias, José" in text, (outcome, text))

        stack.post_webhook(harness.text_webhook("wamid.I1", "5215500009001", "¿Tienen envío a Monterrey?"))
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_messages WHERE provider_message_id = 'wamid.I1'"
                                              " AND outcome = 'replied'") == 1, what="the WhatsApp reply")
        check("whatsapp: answered alongside IMAP", True)

        began = time.monotonic()
        box.deliver([mail(box.customer, box.support, f"Pregunta {i}", "¿Tienen envío a Oaxaca?",
                          message_id=f"burst-{i}") for i in range(200)])
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM inbox WHERE channel = 'imap' AND "
                                              "provider_message_id LIKE 'soporte:burst-%'") == 200,
                         timeout=120, what="200 burst messages stored")
        print(f"  200 delivered to 200 stored: {time.monotonic() - began:.2f} s", flush=True)
        time.sleep(2)
        check("burst: 200 messages each stored once",
              stack.scalar("SELECT count(DISTINCT provider_message_id) FROM inbox WHERE provider_message_id LIKE "
                           "'soporte:burst-%'") == 200 and
              stack.scalar("SELECT count(*) FROM inbox WHERE provider_message_id LIKE 'soporte:burst-%'") == 200)
        verify = stack.audit_verify()
        check("audit chain verifies", verify.returncode == 0, verify.stdout + verify.stderr)
    finally:
        stack.close()


def replies_to(box, env, message_ids):
    """Original Message-ID -> how many replies to it are in the customer's mailbox."""
    counts = dict.fromkeys(message_ids, 0)
    for _, m in box.messages(env["CUSTOMER_USER"], env["CUSTOMER_PASSWORD"]):
        original = str(m["In-Reply-To"] or "").strip().strip("<>")
        if original in counts:
            counts[original] += 1
    return counts


def kill_flow(env, box):
    # SIGKILL at random moments while mail arrives and replies leave: each kill lands mid-poll,
    # mid-decision or mid-send.
    stack = ImapStack(env)
    rng = random.Random(42)
    ids = []
    logs = []  # each killed dispatchd's output
    try:
        stack.start_daemon().wait_for_line("first start", timeout=30)
        for kill in range(20):
            batch = [f"kill-{kill}-{i}" for i in range(2)]
            ids += batch
            box.deliver([mail(box.customer, box.support, "Envío", "¿Tienen envío a Monterrey?", message_id=m)
                         for m in batch])
            time.sleep(rng.uniform(0.1, 1.2))
            stack.daemon.stop(signal.SIGKILL)
            logs.append(stack.daemon.lines)
            stack.start_daemon()
        for m in ids:
            stack.wait_row(m, timeout=60)
        logs.append(stack.daemon.lines)
        stored = stack.scalar("SELECT count(*) FROM inbox WHERE provider_message_id LIKE 'soporte:kill-%'")
        distinct = stack.scalar("SELECT count(DISTINCT provider_message_id) FROM inbox WHERE provider_message_id "
                                "LIKE 'soporte:kill-%'")
        check("20 kills: every message stored, once", stored == len(ids) and distinct == len(ids), (stored, distinct))
        outcomes = {m: stack.row(m)[0] for m in ids}

        def replies_now():
            return replies_to(box, env, [f"{m}@example.test" for m in ids])
        try:  # the last replies on their way through Postfix into the customer's mailbox
            stack.wait_until(lambda: all(replies_now()[f"{m}@example.test"] >= 1 for m in ids
                                         if outcomes[m] == "replied"), timeout=60, what="every reply delivered")
        except AssertionError:
            pass  # the check below names what is missing
        time.sleep(1)
        replies = replies_now()
        twice = [m for m, n in replies.items() if n > 1]
        check("20 kills: no message answered twice", not twice, twice)
        unanswered = [m for m in ids if outcomes[m] == "replied" and replies[f"{m}@example.test"] != 1]
        check("20 kills: every message marked replied has its one reply", not unanswered,
              {m: stack.query("SELECT a.action, a.status, a.provider_message_id, a.error, a.idempotency_key FROM actions a"
                              " JOIN inbox i ON i.id = a.message_id WHERE i.provider_message_id = ?",
                              f"soporte:{m}@example.test") for m in unanswered})
        if unanswered:
            print("  dispatchd's logs about them:\n    " + "\n    ".join(
                line for lines in logs for line in lines if "imap" in line and ("sent" in line or "Sent" in line
                                                                               or "SMTP" in line)), flush=True)
        lost = [m for m, o in outcomes.items() if o not in ("replied", "escalated")]
        check("20 kills: every message answered or escalated to staff", not lost, {m: outcomes[m] for m in lost})
        escalated = [m for m, o in outcomes.items() if o == "escalated"]
        print(f"  {len(ids) - len(escalated)} replied, {len(escalated)} escalated (sends a kill left unknown)",
              flush=True)
        verify = stack.audit_verify()
        check("20 kills: audit chain verifies", verify.returncode == 0, verify.stdout + verify.stderr)
    finally:
        stack.close()


def rebuild_flow(env, box, directory):
    # Dovecot stopped, the support mailbox's UID list and indexes deleted (a rebuilt or restored
    # mailbox: Dovecot numbers it anew with a new UIDVALIDITY), Dovecot started again.
    stack = ImapStack(env)
    try:
        daemon = stack.start_daemon()
        daemon.wait_for_line("first start", timeout=30)
        box.deliver([mail(box.customer, box.support, "Envío", "¿Tienen envío a Monterrey?", message_id="before-1")])
        check("rebuild: mail before the restart answered", stack.wait_row("before-1")[0] == "replied")
        stored_before = stack.scalar("SELECT count(*) FROM inbox WHERE channel = 'imap'")
        # The sessions open now are ended first: a stopped Dovecot leaves them running.
        kick(directory, env["SUPPORT_USER"])
        servers("stop-dovecot", directory)
        maildir = os.path.join(env["MAILDIR_ROOT"], "example.test", "soporte", "Maildir")
        for path in glob.glob(os.path.join(maildir, "dovecot*")):
            os.remove(path) if os.path.isfile(path) else shutil.rmtree(path)
        started = servers("start-dovecot", directory)
        check("rebuild: Dovecot started again", started.returncode == 0, started.stderr)
        box.deliver([mail(box.customer, box.support, "Envío", "¿Tienen envío a Monterrey?", message_id="after-1")])
        outcome = stack.wait_row("after-1", timeout=90)[0]
        check("rebuild: new mail after the restart answered", outcome == "replied", outcome)
        daemon.wait_for_line("UIDVALIDITY changed", timeout=10)
        check("rebuild: the new UIDVALIDITY was noticed and the mailbox read again", True)
        time.sleep(2)
        check("rebuild: nothing stored twice (only the new mail is new)",
              stack.scalar("SELECT count(*) FROM inbox WHERE channel = 'imap'") == stored_before + 1,
              (stored_before, stack.scalar("SELECT count(*) FROM inbox WHERE channel = 'imap'")))
        replies = replies_to(box, env, ["before-1@example.test", "after-1@example.test"])
        check("rebuild: each answered once", replies == {"before-1@example.test": 1, "after-1@example.test": 1},
              replies)
    finally:
        stack.close()


def media_flow(env, box):
    """A mail's attachments kept (docs/media.md, "IMAP"): fetched by UID and section over IMAP,
    their transfer encoding undone."""
    import email.message
    import email.policy
    import hashlib
    pdf = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n" + os.urandom(200 * 1024) + b"\n%%EOF\n"
    text = "Línea uno=\nlínea dos\n" * 50

    def with_files(message_id, body, files):
        m = email.message.EmailMessage(policy=email.policy.SMTP)
        m["From"], m["To"], m["Subject"] = box.customer, box.support, "Factura"
        m["Message-ID"], m["Date"] = f"<{message_id}@example.test>", "Tue, 01 Dec 2026 10:00:00 +0000"
        if body is None:
            name, kind, data = files[0]
            m.set_content(data, maintype=kind.split("/")[0], subtype=kind.split("/")[1], filename=name)
            return m.as_bytes()
        m.set_content(body)
        for name, kind, data in files:
            if isinstance(data, str):
                m.add_attachment(data, subtype="plain", filename=name, cte="quoted-printable")
            else:
                m.add_attachment(data, maintype=kind.split("/")[0], subtype=kind.split("/")[1], filename=name)
        return m.as_bytes()

    stack = ImapStack(env)
    try:
        daemon = stack.start_daemon()
        daemon.wait_for_line("first start", timeout=30)
        box.deliver([with_files("adjunto-1", "Les mando la factura y las notas.",
                                [("factura.pdf", "application/pdf", pdf), ("notas.txt", "text/plain", text)]),
                     with_files("adjunto-2", None, [("escaneo.pdf", "application/pdf", pdf)])])
        stack.wait_row("adjunto-1")
        stack.wait_row("adjunto-2")
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM media") == 3 and
                         stack.scalar("SELECT count(*) FROM media WHERE state = 'pending'") == 0, timeout=60,
                         what="every file settled")
        rows = stack.query("SELECT i.provider_message_id, m.provider_ref, m.state, m.sniffed_type, b.digest, m.size,"
                           " m.id, m.reason FROM media m JOIN inbox i ON i.id = m.message_id"
                           " LEFT JOIN media_blobs b ON b.id = m.blob_id ORDER BY i.id, m.position")
        digest = hashlib.sha256(pdf).hexdigest()
        check("three files: two PDFs and the notes", len(rows) == 3, rows)
        check("the PDF beside the text: kept, base64 undone, sniffed a PDF",
              rows[0][2] == "stored" and rows[0][4] == digest and rows[0][3] == "application/pdf" and
              rows[0][1].startswith("soporte/") and rows[0][1].endswith("/2/base64"), rows[0])
        notes = text.replace("\n", "\r\n").encode()
        check("the quoted-printable notes: kept as written",
              rows[1][2] == "stored" and rows[1][4] in (hashlib.sha256(notes).hexdigest(),
                                                        hashlib.sha256(text.encode()).hexdigest()), rows[1])
        check("the PDF-only mail's PDF: section 1, kept once (the same bytes)",
              rows[2][2] == "stored" and rows[2][4] == digest and rows[2][1].endswith("/1/base64") and
              stack.scalar("SELECT count(*) FROM media_blobs WHERE digest = ?", digest) == 1, rows[2])
        out = os.path.join(stack.dir, "escaneo.pdf")
        done = stack.dispatchctl("media", "get", str(rows[2][6]), "-o", out)
        with open(out, "rb") as f:
            check("dispatchctl media get gives the exact bytes", done.returncode == 0 and f.read() == pdf, done.stderr)
    finally:
        stack.close()


def wrong_password_flow(env, box):
    # Gmail (fake_gmail.py) and WhatsApp run alongside: only the mailbox with the wrong
    # password pauses.
    gmail = gmail_harness.Gmail(SOURCE)
    stack = None
    try:
        stack = gmail_harness.GmailStack(BUILD, SOURCE, gmail, extra_config=imap_config(env), scenario=SCENARIO)
        stack.write_credential("IMAP_SOPORTE_PASSWORD", "not-the-password")
        daemon = stack.start_daemon()
        daemon.wait_for_line("gmail: first start")
        stack.wait_until(lambda: stack.get("/readyz")[0] == 503, timeout=60, what="readyz 503")
        status, body = stack.get("/readyz")
        check("wrong password: /readyz says which mailbox is paused and why",
              status == 503 and "imap" in body and "mailbox soporte" in body and "reload" in body, body)
        check("wrong password: /metrics shows the pause",
              'dispatchd_channel_paused{channel="imap"} 1' in stack.get("/metrics")[1])
        stack.post_webhook(harness.text_webhook("wamid.P1", "5215500009002", "¿Tienen envío a Monterrey?"))
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_messages WHERE provider_message_id = 'wamid.P1'"
                                              " AND outcome = 'replied'") == 1, what="the WhatsApp reply")
        check("wrong password: WhatsApp keeps working", True)
        asked = gmail.deliver(gmail_harness.mail("luis@cliente.example", "Envío", "¿Tienen envío a Monterrey?"))
        check("wrong password: Gmail keeps working", stack.wait_outcome(asked["id"]) == "replied")
        check("wrong password: the password is never in the log",
              all(env["SUPPORT_PASSWORD"] not in line and "not-the-password" not in line for line in daemon.lines))
        stack.write_credential("IMAP_SOPORTE_PASSWORD", env["SUPPORT_PASSWORD"])
        daemon.proc.send_signal(signal.SIGHUP)
        daemon.wait_for_line("imap: soporte: first start", timeout=60)
        box.deliver([mail(box.customer, box.support, "Envío", "¿Tienen envío a Monterrey?", message_id="resumed-1")])

        def resumed():
            rows = stack.query("SELECT outcome FROM v_messages WHERE provider_message_id = ?",
                               "soporte:resumed-1@example.test")
            return rows[0][0] if rows else None
        stack.wait_until(lambda: resumed() not in (None, "pending"), timeout=60, what="the mail after SIGHUP")
        check("SIGHUP with the right password: mail answered", resumed() == "replied", resumed())
        check("SIGHUP: ready again", stack.get("/readyz")[0] == 200)
    finally:
        if stack:
            stack.close()
        gmail.close()


def main():
    directory = tempfile.mkdtemp(prefix="dispatchd-imap-e2e.")
    try:
        env, why_not = start_pair(directory)
        if env is None:
            print(f"SKIP mail servers: {why_not}")
            return SKIP
        box = Mail(env)
        if os.environ.get("IMAP_E2E_ONLY") == "kill":
            return harness.run_flows([lambda: kill_flow(env, box)])
        if os.environ.get("IMAP_E2E_ONLY") == "media":
            return harness.run_flows([lambda: media_flow(env, box)])
        return harness.run_flows([lambda: main_flow(env, box), lambda: media_flow(env, box), lambda: kill_flow(env, box),
                                  lambda: rebuild_flow(env, box, directory), lambda: wrong_password_flow(env, box)])
    finally:
        stop_pair(directory)
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
