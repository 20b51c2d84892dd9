#!/usr/bin/env python3
"""End to end: the real dispatchd reading a real Dovecot over IMAP and answering through a real
Postfix (tests/mail/servers.sh), with fake_model and fake_graph, on 127.0.0.1.

  imap_test.py BUILD_DIR SOURCE_DIR

What it shows: mail delivered through Postfix into the support mailbox is stored soon after
(IDLE), answered in its thread (In-Reply-To, References, Re:) and the reply lands in the
customer's mailbox and in our Sent folder; the original gets the handled flag; an auto-reply and
a bounce are recorded and ignored; an ISO-8859-1 message is decoded; WhatsApp works alongside;
200 messages delivered in a burst are each stored once.

Exits 77 (CTest's skip) when the servers cannot run here (no packages, not root)."""

import email
import email.header
import email.policy
import imaplib
import os
import smtplib
import ssl
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "mail"))
import harness  # noqa: E402
from servers_test import read_env, servers  # noqa: E402

BUILD, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
SCENARIO = os.path.join(SOURCE, "tests", "e2e", "scenario.json")
check = harness.check
SKIP = 77


def mail(sender, to, subject, body, headers=(), charset="utf-8", message_id=None):
    lines = [f"From: {sender}", f"To: {to}", f"Subject: {email.header.Header(subject, 'utf-8').encode()}", "Date: Mon, 07 Dec 2026 10:00:00 +0000",
             f"Message-ID: <{message_id or 'm.' + str(time.time_ns())}@example.test>", "MIME-Version: 1.0",
             f"Content-Type: text/plain; charset={charset}", "Content-Transfer-Encoding: 8bit", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii") + body.encode(charset) + b"\r\n"


class Mail:
    """The pair's accounts as a mail client sees them."""

    def __init__(self, env):
        self.env = env
        self.support, self.customer = env["SUPPORT_USER"], env["CUSTOMER_USER"]

    def deliver(self, raws, sender=None):
        """Hands messages to Postfix's port 25 (no auth: example.test's mail goes to Dovecot)."""
        with smtplib.SMTP("127.0.0.1", int(self.env["SMTP_PORT"]), timeout=30) as smtp:
            for raw in raws:
                smtp.sendmail(sender or self.customer, [self.support], raw)

    def imap(self, user, password):
        context = ssl.create_default_context(cafile=self.env["CA_FILE"])
        conn = imaplib.IMAP4_SSL("127.0.0.1", int(self.env["IMAPS_PORT"]), ssl_context=context, timeout=15)
        conn.login(user, password)
        return conn

    def messages(self, user, password, folder="INBOX"):
        """[(flags, parsed message)] of a folder."""
        with self.imap(user, password) as conn:
            conn.select(folder, readonly=True)
            _, data = conn.uid("SEARCH", None, "ALL")
            out = []
            for uid in data[0].split():
                _, fetched = conn.uid("FETCH", uid, "(FLAGS BODY.PEEK[])")
                flags = fetched[0][0].decode()
                out.append((flags, email.message_from_bytes(fetched[0][1], policy=email.policy.default)))
            return out

    def create(self, user, password, folder):
        with self.imap(user, password) as conn:
            conn.create(folder)


class ImapStack(harness.Stack):
    def __init__(self, env, **options):
        config = {"connectors": {"imap": {"enabled": True, "mailboxes": {"soporte": {
            "address": env["SUPPORT_USER"], "password_env": "IMAP_SOPORTE_PASSWORD",
            "imap": {"host": "127.0.0.1", "port": int(env["IMAPS_PORT"]), "tls": "implicit"},
            "smtp": {"host": "127.0.0.1", "port": int(env["SUBMISSION_PORT"]), "tls": "starttls"},
            "ca_file": env["CA_FILE"], "poll_interval_s": 20, "unknown_recheck_s": 1}}}}}
        super().__init__(BUILD, SOURCE, extra_config=config, scenario=SCENARIO,
                         env_extra={"IMAP_SOPORTE_PASSWORD": env["SUPPORT_PASSWORD"]}, **options)

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


def main():
    directory = tempfile.mkdtemp(prefix="dispatchd-imap-e2e.")
    os.chmod(directory, 0o755)  # the servers' accounts must enter it
    started = servers("start", directory)
    try:
        if started.returncode == 2:
            print(f"SKIP mail servers: {started.stderr.strip()}")
            return SKIP
        if started.returncode != 0:
            print(f"FAIL the pair did not start: {started.stderr.strip()}")
            return 1
        env = read_env(directory)
        return harness.run_flows([lambda: main_flow(env, Mail(env))])
    finally:
        servers("stop", directory)


if __name__ == "__main__":
    sys.exit(main())
