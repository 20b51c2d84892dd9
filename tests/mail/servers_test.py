#!/usr/bin/env python3
"""The throwaway mail-server pair (tests/mail/servers.sh) end to end, with the standard
library's clients and certificate verification on against the pair's test CA:

  a mail submitted as ana (submission port, STARTTLS, AUTH) reaches soporte's INBOX, seen
  over IMAP with STARTTLS and over implicit TLS; IDLE is advertised; the mail survives a
  restart of Dovecot; UIDVALIDITY changes once Dovecot's uid files are deleted; mail for
  another domain is refused, on the SMTP port and on submission after AUTH (never relayed).

  servers_test.py [DIR]   DIR holds the pair (a temporary folder when absent)

Prints one PASS/FAIL line per check; exits 1 on a failure, 77 (CTest's skip) when the
servers cannot run here (no packages, not root)."""

import email.message
import imaplib
import os
import shutil
import smtplib
import ssl
import subprocess
import sys
import tempfile
import time
import uuid

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "servers.sh")
SKIP = 77
failures = []


def servers(command, directory):
    return subprocess.run(["bash", SCRIPT, command, directory], capture_output=True, text=True, timeout=120)


def read_env(directory):
    env = {}
    with open(os.path.join(directory, "env")) as f:
        for line in f:
            key, _, value = line.strip().partition("=")
            env[key] = value
    return env


def check(name, fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - any failure of a check is reported as its FAIL
        failures.append(name)
        print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)
        return False
    print(f"PASS {name}", flush=True)
    return True


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


class Pair:
    def __init__(self, directory):
        self.dir = directory
        self.env = read_env(directory)
        self.ctx = ssl.create_default_context(cafile=self.env["CA_FILE"])
        expect(self.ctx.verify_mode == ssl.CERT_REQUIRED and self.ctx.check_hostname, "verification is off")

    def submit(self, sender, password, to, subject, body="Hola"):
        msg = email.message.EmailMessage()
        msg["From"], msg["To"], msg["Subject"] = sender, to, subject
        msg["Message-ID"] = f"<{uuid.uuid4()}@example.test>"
        msg.set_content(body)
        with smtplib.SMTP("127.0.0.1", int(self.env["SUBMISSION_PORT"]), timeout=15) as s:
            s.ehlo()
            expect("auth" not in s.esmtp_features, "AUTH offered before STARTTLS")
            s.starttls(context=self.ctx)
            s.ehlo()
            expect("PLAIN" in s.esmtp_features.get("auth", "") and "LOGIN" in s.esmtp_features.get("auth", ""),
                   f"AUTH mechanisms: {s.esmtp_features.get('auth')}")
            s.login(sender, password)
            s.send_message(msg)

    def imap(self, implicit_tls, user, password):
        if implicit_tls:
            conn = imaplib.IMAP4_SSL("127.0.0.1", int(self.env["IMAPS_PORT"]), ssl_context=self.ctx, timeout=15)
        else:
            conn = imaplib.IMAP4("127.0.0.1", int(self.env["IMAP_PORT"]), timeout=15)
            # No LOGINDISABLED to expect: Dovecot counts 127.0.0.1 to itself as secured.
            expect("STARTTLS" in conn.capabilities, f"CAPABILITY: {conn.capabilities}")
            conn.starttls(ssl_context=self.ctx)
        conn.login(user, password)
        return conn

    def find(self, implicit_tls, user, password, subject, seconds=10):
        """The INBOX's UIDVALIDITY and the UIDs of the mails with this subject, waiting for one."""
        deadline = time.monotonic() + seconds
        while True:
            conn = self.imap(implicit_tls, user, password)
            try:
                conn.select("INBOX", readonly=True)
                uidvalidity = int(conn.response("UIDVALIDITY")[1][0])
                _, data = conn.uid("SEARCH", None, "SUBJECT", f'"{subject}"')
                uids = data[0].split()
            finally:
                conn.logout()
            if uids or time.monotonic() > deadline:
                return uidvalidity, uids
            time.sleep(0.2)


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else None
    own_dir = directory is None
    if own_dir:
        directory = tempfile.mkdtemp(prefix="dispatchd-mail.")
        os.chmod(directory, 0o755)  # the servers' accounts must enter it
    started = servers("start", directory)
    try:
        if started.returncode == 2:
            print(f"SKIP mail servers: {started.stderr.strip()}")
            return SKIP
        if not check("the pair starts", lambda: expect(started.returncode == 0, started.stderr.strip())):
            return 1
        pair = Pair(directory)
        env = pair.env
        support = (env["SUPPORT_USER"], env["SUPPORT_PASSWORD"])
        customer = (env["CUSTOMER_USER"], env["CUSTOMER_PASSWORD"])
        subject = f"pedido {uuid.uuid4().hex[:8]}"
        state = {}

        check("submission: STARTTLS, AUTH as ana, mail to soporte",
              lambda: pair.submit(*customer, support[0], subject))

        def seen(implicit_tls):
            uidvalidity, uids = pair.find(implicit_tls, *support, subject)
            expect(len(uids) == 1, f"{len(uids)} mails with the subject in soporte's INBOX")
            state["uidvalidity"], state["uid"] = uidvalidity, uids[0]

        check("imap (STARTTLS): the mail is in soporte's INBOX", lambda: seen(False))
        check("imaps (implicit TLS): the mail is in soporte's INBOX", lambda: seen(True))

        def idle():
            conn = pair.imap(True, *support)
            try:
                _, caps = conn.capability()
                expect(b"IDLE" in caps[0].split(), f"CAPABILITY: {caps[0]!r}")
            finally:
                conn.logout()

        check("imap: IDLE in CAPABILITY", idle)

        def wrong_password():
            try:
                pair.imap(True, support[0], "wrong")
            except imaplib.IMAP4.error:
                return
            raise AssertionError("a wrong password logged in")

        check("imap: a wrong password is refused", wrong_password)

        def smtp_inbound():
            sub = f"entrante {uuid.uuid4().hex[:8]}"
            with smtplib.SMTP("127.0.0.1", int(env["SMTP_PORT"]), timeout=15) as s:
                s.starttls(context=pair.ctx)
                s.sendmail("cliente@outside.test", [support[0]], f"Subject: {sub}\r\n\r\nHola\r\n")
            expect(len(pair.find(False, *support, sub)[1]) == 1, "not delivered")

        check("smtp port: unauthenticated mail for example.test is delivered", smtp_inbound)

        def restart():
            for command in ("stop-dovecot", "start-dovecot"):
                r = servers(command, directory)
                expect(r.returncode == 0, f"{command}: {r.stderr.strip()}")

        def survives_restart():
            restart()
            uidvalidity, uids = pair.find(False, *support, subject, seconds=0)
            expect(uids == [state["uid"]] and uidvalidity == state["uidvalidity"],
                   f"after the restart: UIDVALIDITY {uidvalidity}, UIDs {uids}; before: {state}")

        check("dovecot restart: the mail and its UID stay", survives_restart)

        def uidvalidity_changes():
            r = servers("stop-dovecot", directory)
            expect(r.returncode == 0, r.stderr.strip())
            user, domain = support[0].split("@")
            maildir = os.path.join(env["MAILDIR_ROOT"], domain, user, "Maildir")
            removed = [f for f in os.listdir(maildir) if f.startswith("dovecot")]
            expect("dovecot-uidlist" in removed, f"no dovecot-uidlist in {maildir}: {os.listdir(maildir)}")
            for f in removed:
                path = os.path.join(maildir, f)
                shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
            time.sleep(1.1)  # a new UIDVALIDITY is the clock's seconds
            r = servers("start-dovecot", directory)
            expect(r.returncode == 0, r.stderr.strip())
            uidvalidity, uids = pair.find(True, *support, subject, seconds=0)
            expect(len(uids) == 1, f"{len(uids)} mails with the subject after the uid files went")
            expect(uidvalidity != state["uidvalidity"], f"UIDVALIDITY still {uidvalidity}")

        check("dovecot: UIDVALIDITY changes when its uid files are deleted", uidvalidity_changes)

        def relay_refused():
            with smtplib.SMTP("127.0.0.1", int(env["SMTP_PORT"]), timeout=15) as s:
                s.starttls(context=pair.ctx)
                try:
                    s.sendmail("cliente@outside.test", ["someone@elsewhere.test"], "Subject: x\r\n\r\nx\r\n")
                except smtplib.SMTPRecipientsRefused as e:
                    code = e.recipients["someone@elsewhere.test"][0]
                    expect(code in (554, 550), f"refused with {code}")
                    return
            raise AssertionError("the smtp port accepted mail for another domain")

        check("smtp port: mail for another domain is refused (no relay)", relay_refused)

        def outside_refused():
            try:
                pair.submit(*customer, "cliente@elsewhere.test", "afuera")
            except smtplib.SMTPRecipientsRefused as e:
                code = e.recipients["cliente@elsewhere.test"][0]
                expect(code in (550, 554), f"refused with {code}")
            else:
                raise AssertionError("submission accepted mail for another domain")
            with open(os.path.join(directory, "postfix", "postfix.log"), errors="replace") as f:
                expect(not any("postfix/smtp[" in line for line in f), "Postfix's SMTP client ran")

        check("submission: authenticated mail for another domain is refused, never relayed", outside_refused)
        return 1 if failures else 0
    finally:
        if started.returncode != 2:
            stopped = servers("stop", directory)
            check("the pair stops", lambda: expect(stopped.returncode == 0, stopped.stderr.strip()))
        if own_dir:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    code = main()
    if failures:
        code = 1
    print(f"mail servers: {'FAIL ' + ', '.join(failures) if failures else 'ok'}")
    sys.exit(code)
