"""The Gmail side of the e2e harness: fake_gmail.py as a child process with its control
endpoints, a Stack with the Gmail connector on it, and a builder of RFC 822 test mail. Used by
gmail_test.py and scripts/demo.py."""

import base64
import contextlib
import email.header
import email.utils
import json
import os
import sys
import time
import urllib.request

import harness

ADDRESS = "soporte@tienda.example"
CLIENT_ID = "client-123.apps.example"  # not a secret: Google shows it on the consent screen
# Long and distinctive, as harness.py's: the secrets audit searches for them.
CLIENT_SECRET = "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1e9f3b7d2a580"
REFRESH = "1//refresh-GMREFRESH-0b8e2d6a4f1c9375e0a8c2f6b4d1e793"
def mail(sender, subject, body, headers=None, charset="utf-8", message_id=None, name="Ana Pérez"):
    """An RFC 822 message as a mail client writes it: non-ASCII names and subjects as RFC 2047
    encoded words, the body 8-bit in `charset`."""
    lines = [f"From: {email.utils.formataddr((name, sender), charset='utf-8')}" if name else f"From: {sender}",
             f"To: Soporte <{ADDRESS}>", f"Subject: {email.header.Header(subject, 'utf-8').encode()}",
             "Date: Tue, 01 Dec 2026 10:00:00 +0000",
             f"Message-ID: <{message_id or sender.split('@')[0] + '.' + str(time.time_ns())}@mail.example>",
             "MIME-Version: 1.0", f"Content-Type: text/plain; charset={charset}", "Content-Transfer-Encoding: 8bit"]
    lines += headers or []
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii") + body.encode(charset) + b"\r\n"


class Gmail:
    """fake_gmail.py as a child process, and its control endpoints."""

    def __init__(self, source, token_lifetime=3600):
        self.proc = harness.Process([sys.executable, os.path.join(source, "tests", "fakes", "fake_gmail.py"),
                                     "--address", ADDRESS, "--client-id", CLIENT_ID, "--client-secret",
                                     CLIENT_SECRET, "--refresh-token", REFRESH, "--token-lifetime",
                                     str(token_lifetime), "--quiet"] + self._audit_flags(), name="fake_gmail")
        first = json.loads(self.proc.wait_for_line('"listening"'))
        self.api, self.token_url = first["api_base_url"], first["token_url"]

    @staticmethod
    def _audit_flags():
        # The access tokens it issues are secrets too: the audit searches for each of them.
        issued = harness.audit_path("gmail-access-tokens", ".secrets")
        return ["--issued-tokens", issued] if issued else []

    def control(self, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        method = "GET" if body is None and path == "state" else "POST"
        request = urllib.request.Request(f"{self.api}/_fake/{path}", data=data if method == "POST" else None,
                                         method=method, headers={"Content-Type": "application/json"})
        if method == "POST" and data is None:
            request.data = b"{}"
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read() or b"{}")

    def deliver(self, raw: bytes, **extra):
        return self.control("deliver", dict({"raw_b64url": _b64(raw)}, **extra))

    def state(self):
        return self.control("state")

    def sent(self):
        return self.state()["sent"]

    def close(self):
        self.proc.stop()


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


class GmailStack(harness.Stack):
    """harness.Stack (fake_model, fake_graph, dispatchd) with the Gmail connector on fake_gmail.
    Secrets come from $CREDENTIALS_DIRECTORY files, so a reload can read a new refresh token."""

    def __init__(self, build, source, gmail, extra_gmail=None, **stack_options):
        self.gmail = gmail
        config = {"connectors": {"gmail": dict({
            "enabled": True, "api_base_url": gmail.api, "token_url": gmail.token_url,
            "client_id_env": "GMAIL_CLIENT_ID", "client_secret_env": "GMAIL_CLIENT_SECRET",
            "refresh_token_env": "GMAIL_REFRESH_TOKEN", "poll_interval_s": 1, "handled_label": "dispatchd/handled",
            "unknown_recheck_s": 1}, **(extra_gmail or {}))}}
        # extra_config: more of the configuration (another channel's section), merged in.
        harness.merge(config, stack_options.pop("extra_config", None) or {})
        super().__init__(build, source, extra_config=config, **stack_options)
        self.credentials = os.path.join(self.dir, "credentials")
        os.makedirs(self.credentials)
        for name, value in (("GMAIL_CLIENT_ID", CLIENT_ID), ("GMAIL_CLIENT_SECRET", CLIENT_SECRET),
                            ("GMAIL_REFRESH_TOKEN", REFRESH)):
            self.write_credential(name, value)
        self.env["CREDENTIALS_DIRECTORY"] = self.credentials

    def write_credential(self, name, value):
        with open(os.path.join(self.credentials, name), "w") as f:
            f.write(value + "\n")

    def outcome(self, gmail_id):
        rows = self.query("SELECT outcome FROM v_messages WHERE channel = 'gmail' AND provider_message_id = ?",
                          gmail_id)
        return rows[0][0] if rows else None

    def wait_outcome(self, gmail_id, timeout=30.0):
        try:
            self.wait_until(lambda: self.outcome(gmail_id) not in (None, "pending"), timeout=timeout,
                            what=f"the outcome of {gmail_id}")
        except AssertionError:
            if self.daemon:
                print("  dispatchd's log (last 30 lines):\n    " + "\n    ".join(self.daemon.lines[-30:]), flush=True)
            raise
        return self.outcome(gmail_id)

    def replies_in(self, thread_id):
        return [s for s in self.gmail.sent() if s["threadId"] == thread_id]


@contextlib.contextmanager
def started(build, source, before_start=None, token_lifetime=3600, **stack_options):
    """fake_gmail and a GmailStack whose dispatchd has made its first start: yields (gmail,
    stack, daemon) and stops them all at the end. `before_start(gmail)` runs before dispatchd."""
    gmail = Gmail(source, token_lifetime=token_lifetime)
    stack = None
    try:
        if before_start:
            before_start(gmail)
        stack = GmailStack(build, source, gmail, **stack_options)
        daemon = stack.start_daemon()
        daemon.wait_for_line("first start")
        yield gmail, stack, daemon
    finally:
        if stack:
            stack.close()
        gmail.close()
