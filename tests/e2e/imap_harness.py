"""The IMAP side of the e2e harness: the throwaway Dovecot and Postfix pair of
tests/mail/servers.sh, the connectors.imap section that reads its support mailbox, a mail client
of its accounts, and a builder of RFC 822 test mail. Used by imap_test.py and scripts/demo.py."""

import email
import email.header
import email.policy
import email.utils
import imaplib
import os
import smtplib
import ssl
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "mail"))
from servers_test import read_env, servers  # noqa: E402

SERVERS_SH = os.path.join(HERE, "..", "mail", "servers.sh")


def start_pair(directory):
    """Starts the pair in `directory`: (its env, None), or (None, why not) when it cannot run
    here (no packages, not root), or raises when it fails."""
    os.makedirs(directory, exist_ok=True)
    os.chmod(directory, 0o755)  # the servers' accounts must enter it
    started = servers("start", directory)
    if started.returncode == 2:
        return None, started.stderr.strip()
    if started.returncode != 0:
        raise RuntimeError(f"the mail servers did not start: {started.stderr.strip()}")
    return read_env(directory), None


def stop_pair(directory):
    servers("stop", directory)


def kick(directory, user):
    """Ends `user`'s open IMAP sessions (a stopped Dovecot leaves them running)."""
    subprocess.run(["bash", SERVERS_SH, "kick", directory, user], check=True, timeout=60)


def imap_config(env, poll_interval_s=20):
    """connectors.imap for the pair's support mailbox, its password in IMAP_SOPORTE_PASSWORD."""
    return {"connectors": {"imap": {"enabled": True, "mailboxes": {"soporte": {
        "address": env["SUPPORT_USER"], "password_env": "IMAP_SOPORTE_PASSWORD",
        "imap": {"host": "127.0.0.1", "port": int(env["IMAPS_PORT"]), "tls": "implicit"},
        "smtp": {"host": "127.0.0.1", "port": int(env["SUBMISSION_PORT"]), "tls": "starttls"},
        "ca_file": env["CA_FILE"], "poll_interval_s": poll_interval_s, "unknown_recheck_s": 1}}}}}


def mail(sender, to, subject, body, headers=(), charset="utf-8", message_id=None):
    lines = [f"From: {sender}", f"To: {to}", f"Subject: {email.header.Header(subject, 'utf-8').encode()}", f"Date: {email.utils.formatdate()}",
             f"Message-ID: <{message_id or 'm.' + str(time.time_ns())}@example.test>", "MIME-Version: 1.0",
             f"Content-Type: text/plain; charset={charset}", "Content-Transfer-Encoding: 8bit", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii") + body.encode(charset) + b"\r\n"


class Mail:
    """The pair's accounts as a mail client sees them."""

    def __init__(self, env):
        self.env = env
        self.support, self.customer = env["SUPPORT_USER"], env["CUSTOMER_USER"]

    def deliver(self, raws, sender=None):
        """Hands messages to Postfix's port 25 (no auth: example.test's mail goes to Dovecot);
        `sender` "" is the null reverse path of a bounce."""
        with smtplib.SMTP("127.0.0.1", int(self.env["SMTP_PORT"]), timeout=30) as smtp:
            for raw in raws:
                smtp.sendmail(self.customer if sender is None else sender, [self.support], raw)

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
