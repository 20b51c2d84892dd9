#!/usr/bin/env python3
"""The IMAP and SMTP clients of connectors/imap/ against real servers: starts the Dovecot and
Postfix pair (tests/mail/servers.sh) and fake_smtp.py (tests/fakes/), makes a second CA (for the
wrong-CA checks) and a Sent mailbox, then runs imap_mail_tests (tests/connectors/imap_mail_test.cpp,
and the IMAP channel's contract harness, tests/connectors/imap_contract_test.cpp):
first every case but [auth] and [outage], then [auth] (wrong passwords, which earn 127.0.0.1
Dovecot's auth penalty), restarts Dovecot (forgetting it), then [outage], which stops Dovecot.

  imap_clients_test.py IMAP_MAIL_TESTS [DIR]   DIR holds the pair (a temporary folder when absent)

Exits 0 when both runs pass, 1 otherwise, 77 (CTest's skip) when the servers cannot run here
(no packages, not root)."""

import imaplib
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from servers_test import read_env, servers  # noqa: E402 - the pair's own test's helpers

FAKE_SMTP = os.path.join(HERE, "..", "fakes", "fake_smtp.py")
SKIP = 77


def wrong_ca(directory):
    path = os.path.join(directory, "wrong-ca.pem")
    key = os.path.join(directory, "wrong-ca.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                    "/CN=not the test CA", "-keyout", key, "-out", path], check=True, capture_output=True)
    os.remove(key)
    return path


def create_sent(env):
    context = ssl.create_default_context(cafile=env["CA_FILE"])
    with imaplib.IMAP4_SSL("127.0.0.1", int(env["IMAPS_PORT"]), ssl_context=context, timeout=15) as conn:
        conn.login(env["SUPPORT_USER"], env["SUPPORT_PASSWORD"])
        status, data = conn.create("Sent")
        if status != "OK" and b"exists" not in b" ".join(d for d in data if d).lower():
            raise RuntimeError(f"CREATE Sent: {status} {data}")


def main():
    binary = sys.argv[1]
    directory = sys.argv[2] if len(sys.argv) > 2 else None
    own_dir = directory is None
    if own_dir:
        directory = tempfile.mkdtemp(prefix="dispatchd-imap.")
    os.makedirs(directory, exist_ok=True)
    os.chmod(directory, 0o755)  # the servers' accounts must enter it
    started = servers("start", directory)
    fake = None
    try:
        if started.returncode == 2:
            print(f"SKIP mail servers: {started.stderr.strip()}")
            return SKIP
        if started.returncode != 0:
            print(f"FAIL the pair did not start: {started.stderr.strip()}")
            return 1
        env = read_env(directory)
        create_sent(env)
        tls = os.path.join(directory, "tls")
        fake = subprocess.Popen([sys.executable, FAKE_SMTP, os.path.join(tls, "server.pem"),
                                 os.path.join(tls, "server.key")],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        listening = json.loads(fake.stdout.readline())
        run_env = dict(os.environ, DISPATCHD_MAIL_DIR=directory, DISPATCHD_WRONG_CA_FILE=wrong_ca(directory),
                       DISPATCHD_FAKE_SMTP_PORT=str(listening["port"]))
        failed = False
        for spec in ("~[outage]~[auth]", "[auth]", "[outage]"):
            if spec == "[outage]":
                # Dovecot forgets the auth penalty [auth] earned 127.0.0.1 (it is in memory).
                for command in ("stop-dovecot", "start-dovecot"):
                    restarted = servers(command, directory)
                    if restarted.returncode != 0:
                        print(f"FAIL {command}: {restarted.stderr.strip()}")
                        return 1
            began = time.monotonic()
            run = subprocess.run([binary, spec, "--warn", "NoTests"], env=run_env, timeout=300)
            print(f"imap_mail_tests {spec}: exit {run.returncode} in {time.monotonic() - began:.1f} s", flush=True)
            failed = failed or run.returncode != 0
        return 1 if failed else 0
    finally:
        if fake is not None:
            fake.stdin.close()
            fake.terminate()
            fake.wait(timeout=10)
        servers("stop", directory)
        if own_dir:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
