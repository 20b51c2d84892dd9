#!/usr/bin/env python3
"""End-to-end: the real dispatchd on a disk that fills up while it works, then has room again.

The database lives on a small tmpfs mounted in a private mount namespace (`unshare -m` as
root, `unshare -rm` otherwise), so nothing outside the test sees it. A filler file takes
the last free byte while replies are being decided. What must hold: webhooks that cannot
be stored are answered 500 (Meta delivers them again) and stored when redelivered; the
decisions the full disk took back are made again; every customer gets exactly one reply;
the process never dies, says why, and /readyz tells. Each check prints pass/FAIL; exit 1
when any failed, 77 (CTest's skip) when this machine cannot mount a tmpfs.

Usage: full_disk_test.py BUILD_DIR SOURCE_DIR
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402

BUILD, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
SCENARIO = os.path.join(SOURCE, "tests", "e2e", "scenario.json")
INSIDE = "DISPATCHD_FULL_DISK_NAMESPACE"
SKIP = 77
TEXT = "¿Tienen envío a Monterrey?"  # the scenario answers it with enviar_mensaje to the sender
results = []


def check(name, condition, detail=""):
    results.append(bool(condition))
    print(("pass " if condition else "FAIL ") + name + ("" if condition else f": {detail}"), flush=True)


def enter_namespace():
    """Runs this script again in a private mount namespace; returns its exit code."""
    unshare = shutil.which("unshare")
    if not unshare:
        print("skip: no unshare(1) on this machine")
        return SKIP
    for flags in (["-m"], ["-rm"]) if os.geteuid() == 0 else (["-rm"],):
        if subprocess.run([unshare, *flags, "true"], capture_output=True).returncode == 0:
            return subprocess.run([unshare, *flags, sys.executable, *sys.argv], env=dict(os.environ, **{INSIDE: "1"}),
                                  check=False).returncode
    print("skip: cannot make a private mount namespace here (unshare -m / -rm refused)")
    return SKIP


def fill(folder):
    """Writes a file until the filesystem refuses another byte; returns its path."""
    path = os.path.join(folder, "filler")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 65536)
    except OSError:
        pass
    try:
        while True:
            os.write(fd, b"\0")
    except OSError:
        pass
    os.close(fd)
    return path


def sender(n):
    return f"52155000050{n:02d}"


def webhook(n):
    # Fixed timestamps: a redelivery is byte for byte the same event.
    return harness.text_webhook(f"wamid.DISK{n}", sender(n), TEXT, timestamp=1_790_000_000 + n)


def outcomes(stack):
    return dict(stack.query("SELECT outcome, count(*) FROM v_messages GROUP BY outcome"))


def run(mount):
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO, workdir=mount, model_latency_ms=300)
    notify = harness.NotifySocket(os.path.join(mount, "notify.sock"))
    try:
        daemon = stack.start_daemon({"NOTIFY_SOCKET": notify.path})
        check("before: answered", stack.post_webhook(webhook(0))[0] == 200)
        stack.wait_until(lambda: outcomes(stack).get("replied") == 1, what="the first reply")

        # Ten messages whose model calls are running when the disk fills.
        in_flight = [stack.post_webhook(webhook(n))[0] for n in range(1, 11)]
        check("ten webhooks stored before the disk fills", in_flight == [200] * 10, in_flight)
        filler = fill(mount)

        # Ten more while it is full: refused with 500, so that Meta delivers them again.
        refused = [stack.post_webhook(webhook(n))[0] for n in range(11, 21)]
        check("full disk: new webhooks answered 500", refused == [500] * 10, refused)
        status, body = stack.get("/readyz")
        check("full disk: /readyz 503 says why", status == 503 and "database or disk is full" in body, (status, body))
        status, metrics = stack.get("/metrics")
        failed = re.search(r'^dispatchd_store_failures_total\{step="commit"\} (\d+)$', metrics, re.M)
        check("full disk: /metrics counts the failed commits", status == 200 and failed and int(failed.group(1)) > 0,
              failed)
        check("full disk: the log says why", any("database or disk is full" in line for line in daemon.lines),
              daemon.lines[-10:])
        time.sleep(1.5)  # decisions made meanwhile are lost and taken again, over and over
        check("full disk: the decisions made meanwhile were not stored, and said so",
              any("the decision was not stored; taken again" in line for line in daemon.lines), daemon.lines[-10:])
        check("full disk: still running", daemon.proc.poll() is None)
        daemon.proc.send_signal(signal.SIGHUP)  # a reload the audit trail cannot record is refused
        refusal = daemon.wait_for_line("reload refused")
        check("full disk: a reload is refused, the audit trail cannot record it",
              "the running catalog and prompt stay" in refusal, refusal)
        status = [m for m in notify.drain() if m.startswith("STATUS=")]
        check("full disk: systemd's STATUS says so",
              any("NOT STORING: COMMIT: database or disk is full" in m for m in status), status[-3:])
        check("full disk: no refused message was stored",
              stack.scalar("SELECT count(*) FROM v_messages WHERE provider_message_id IN (%s)" %
                           ",".join(f"'wamid.DISK{n}'" for n in range(11, 21))) == 0)

        os.remove(filler)
        redelivered = [stack.post_webhook(webhook(n))[0] for n in range(11, 21)]
        check("room again: the redelivered webhooks are stored", redelivered == [200] * 10, redelivered)
        stack.wait_until(lambda: outcomes(stack).get("replied") == 21, timeout=60,
                         what=f"21 replies (now {outcomes(stack)})")
        stack.wait_until(lambda: len(stack.graph_messages()) >= 21, what="the fake's record of every send")
        time.sleep(0.5)  # a duplicate would arrive now
        sent = sorted(to for to, _, _ in stack.graph_messages())
        check("every customer got exactly one reply", sent == sorted(sender(n) for n in range(21)), sent)
        check("nothing left in processing or sending",
              stack.scalar("SELECT count(*) FROM v_messages WHERE outcome NOT IN ('replied')") == 0
              and stack.scalar("SELECT count(*) FROM v_actions WHERE status <> 'sent'") == 0)
        check("one stored model attempt per message, whatever was lost",
              stack.scalar("SELECT count(*) FROM v_attempts") == 21, stack.scalar("SELECT count(*) FROM v_attempts"))
        status, body = stack.get("/readyz")
        check("room again: /readyz 200", status == 200, (status, body))
        check("room again: the log says so", any("rounds are stored again" in line for line in daemon.lines))
        daemon.proc.send_signal(signal.SIGHUP)
        daemon.wait_for_line("reloaded the catalog")
        reloads = stack.scalar("SELECT count(*) FROM v_audit WHERE event = 'config_reload'")
        check("room again: a reload is applied and audited once", reloads == 1, reloads)
        verify = stack.audit_verify()
        check("the audit chain verifies", verify.returncode == 0, verify.stdout + verify.stderr)
        check("SIGTERM: exit 0", daemon.stop() == 0)
    finally:
        notify.close()
        stack.close()


def main():
    if os.environ.get(INSIDE) != "1":
        return enter_namespace()
    mount = tempfile.mkdtemp(prefix="dispatchd-full-disk-")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", mount], capture_output=True, text=True)
    if mounted.returncode != 0:
        print("skip: cannot mount a tmpfs here: " + mounted.stderr.strip())
        return SKIP
    try:
        run(mount)
    finally:
        subprocess.run(["umount", "-l", mount], check=False)
        os.rmdir(mount)
    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
