#!/usr/bin/env python3
"""Secrets stay secret: none of the stack's secrets appears in anything dispatchd
writes or says.

  secrets_test.py BUILD_DIR SOURCE_DIR AUDIT_ROOT

The e2e tests (e2e_test.py, gmail_test.py, notify_test.py, injection_test.py and the demo) run under CTest with
DISPATCHD_SECRETS_AUDIT_DIR=AUDIT_ROOT/<test> (tests/CMakeLists.txt), so harness.py keeps
everything they produce: dispatchd's log and stderr, every dispatchctl output, every answer
dispatchd gave (/metrics, /readyz, the staff API...), each request the model fake received, and
the stack's files at close (SQLite file, -wal, -shm, backups). This script adds a flow of its own
in AUDIT_ROOT/extras (the dispatchctl commands, staff logins, a backup, the Gmail token refresh,
invalid_grant and a reload with a new refresh token), then searches all of it for every secret:
the LLM key, the WhatsApp app secret, access and verify tokens, the Gmail client secret and
refresh tokens, every access token the fake Gmail issued, every staff token and session id. The
one place a secret belongs is the Authorization header of the requests to the model (the LLM
key): it is checked to be there, and everything else in those requests is searched.
"""

import json
import os
import shutil
import signal
import sys
import tempfile
import urllib.request

BUILD, SOURCE, AUDIT_ROOT = (os.path.abspath(a) for a in sys.argv[1:4])
os.environ["DISPATCHD_SECRETS_AUDIT_DIR"] = os.path.join(AUDIT_ROOT, "extras")  # read by harness at import
shutil.rmtree(os.environ["DISPATCHD_SECRETS_AUDIT_DIR"], ignore_errors=True)  # this script's own records only

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gmail_harness  # noqa: E402
import harness  # noqa: E402
import secrets_scan  # noqa: E402
from gmail_harness import mail  # noqa: E402

SCENARIO = os.path.join(SOURCE, "tests", "e2e", "scenario.json")
# On PostgreSQL (CTest's "e2e[postgresql]: secrets stay secret", DISPATCHD_TEST_BACKEND) the
# stacks' databases are on the test server and kept as pg_dump files; the demo runs on SQLite only.
ON_POSTGRESQL = os.environ.get("DISPATCHD_TEST_BACKEND") == "postgresql"
# AUDIT_ROOT's folders, one per e2e test (tests/CMakeLists.txt).
E2E_TESTS = ("e2e", "gmail", "notify", "injection") if ON_POSTGRESQL else ("e2e", "gmail", "notify", "demo", "injection")
NEW_REFRESH = "1//refresh-GMRELOAD-c5e0a7f3b9d1468e2c7a0f5b3e9d16a4"
check = harness.check


def known_secrets():
    """{name: value}: the harness's fixed secrets and those made during the runs."""
    out = {"LLM key": harness.LLM_KEY, "WhatsApp app secret": harness.APP_SECRET,
           "WhatsApp verify token": harness.VERIFY_TOKEN, "WhatsApp access token": harness.ACCESS_TOKEN,
           "admin staff token": harness.STAFF_TOKEN, "Gmail client secret": gmail_harness.CLIENT_SECRET,
           "Gmail refresh token": gmail_harness.REFRESH, "Gmail refresh token (reloaded here)": NEW_REFRESH,
           # gmail_test.py's invalid_grant flow reloads this one.
           "Gmail refresh token (gmail_test reload)": "1//new-refresh"}
    out.update(secrets_scan.made_during_run(AUDIT_ROOT))
    return out


def scanner_self_check():
    # The scanner finds a planted secret in each form a leak would take, and accepts the LLM key
    # only in a model request's Authorization header.
    import base64
    key = harness.LLM_KEY
    with tempfile.TemporaryDirectory(prefix="dispatchd-secrets-scan-") as root:
        planted = {"out-dispatchd-1.log": b"info: started\nwarn: key " + key.encode() + b"\n",
                   "stack-1/dispatchd.db": b"\0" * 4093 + base64.b64encode(b"xy" + harness.APP_SECRET.encode() + b"z"),
                   "stack-1/dispatchd.db-wal": harness.ACCESS_TOKEN.encode().hex().upper().encode(),
                   "http-1.txt": b"GET /x -> 200\n" + base64.urlsafe_b64encode(b"q" + gmail_harness.REFRESH.encode()),
                   "clean-1.txt": b"nothing to see " * 100}
        requests = [{"target": "/v1/chat/completions", "headers": [["authorization", f"Bearer {key}"]], "body": "{}"},
                    {"target": "/v1/chat/completions", "headers": [["authorization", f"Bearer {key}"],
                                                                   ["x-debug", key]], "body": "{}"},
                    {"target": "/v1/chat/completions", "headers": [["authorization", f"Bearer {key}"]],
                     "body": json.dumps({"messages": [{"content": "secret " + harness.VERIFY_TOKEN}]})}]
        planted["model-requests-1.jsonl"] = "".join(json.dumps(r) + "\n" for r in requests).encode()
        for name, data in planted.items():
            os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
            with open(os.path.join(root, name), "wb") as f:
                f.write(data)
        scan = secrets_scan.Scan({"LLM key": key, "app secret": harness.APP_SECRET,
                                  "access token": harness.ACCESS_TOKEN, "refresh": gmail_harness.REFRESH,
                                  "verify": harness.VERIFY_TOKEN})
        scan.tree(root, key)
        found = sorted((where.split(os.sep)[-1].split(" @")[0].split(" ")[0], name) for where, name, _ in scan.hits)
        check("scanner: finds each planted secret (raw, base64 at an odd offset, HEX, base64url, in a model request's"
              " other header and body) and nothing in the clean file",
              found == [("dispatchd.db", "app secret"), ("dispatchd.db-wal", "access token"), ("http-1.txt", "refresh"),
                        ("model-requests-1.jsonl", "LLM key"), ("model-requests-1.jsonl", "verify"),
                        ("out-dispatchd-1.log", "LLM key")], found)
        check("scanner: the key in the Authorization header of all 3 model requests is expected, not a hit",
              scan.authorized_with_llm_key == 3 and scan.model_requests == 3,
              (scan.authorized_with_llm_key, scan.model_requests))


def login(stack, name, token):
    """POST /api/session: the session cookie's value (a secret too) and the CSRF token."""
    request = urllib.request.Request(stack.url("/api/session"), data=json.dumps({"name": name, "token": token}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=20) as response:
        cookie = response.headers["Set-Cookie"].split(";")[0].split("=", 1)[1]  # the header only carries it
        body = response.read().decode()
    harness.audit_write("http", f"POST /api/session -> 200\n{body}")
    csrf = json.loads(body)["csrf"]
    harness.remember_secret(cookie, "session")
    return cookie, csrf


def staff_by_admin(stack, name):
    """A personal token made through the API with the admin token. Its answer carries the token
    by design, so it is not kept for the audit; the token is searched for instead."""
    request = urllib.request.Request(stack.url("/api/staff"), data=json.dumps({"name": name}).encode(), method="POST",
                                     headers={"Content-Type": "application/json",
                                              "Authorization": f"Bearer {harness.STAFF_TOKEN}"})
    with urllib.request.urlopen(request, timeout=20) as response:
        token = json.loads(response.read())["token"]
    harness.remember_secret(token)
    return token


def scenario_with_refusals(folder):
    """scenario.json plus a message the model refuses with 401 (a bad key, as a provider says it)."""
    with open(SCENARIO, encoding="utf-8") as f:
        scenario = json.load(f)
    scenario["rules"].append({"when": "clave rota", "errors": [401], "replies": scenario["default"]})
    path = os.path.join(folder, "scenario.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(scenario, f, ensure_ascii=False)
    return path


def extras_flow():
    # Graph answers the first send with error 190 (the access token refused): the error paths log.
    with tempfile.TemporaryDirectory(prefix="dispatchd-secrets-") as work, gmail_harness.started(
            BUILD, SOURCE, scenario=scenario_with_refusals(work), graph_script="190") as (gmail, stack, daemon):
        status, body = stack.get(f"/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token={harness.VERIFY_TOKEN}"
                                 "&hub.challenge=20261201")
        check("extras: the verification handshake with the verify token", (status, body) == (200, "20261201"))
        check("extras: a wrong verify token is 403", stack.get(
            "/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=not-it&hub.challenge=1")[0] == 403)
        forged = harness.text_webhook("wamid.S0", "5215500007000", "hola")
        check("extras: a forged signature is 401", stack.post_webhook(forged, harness.sign(forged, "other"))[0] == 401)
        for wamid, sender, text in (("wamid.S1", "5215500007001", "Hola, ¿a qué hora abren?"),
                                    ("wamid.S2", "5215500007002", "Necesito la factura de octubre")):
            check(f"extras: {wamid} accepted", stack.post_webhook(harness.text_webhook(wamid, sender, text))[0] == 200)
        refused = harness.text_webhook("wamid.S3", "5215500007003", "Tengo la clave rota")
        check("extras: wamid.S3 accepted", stack.post_webhook(refused)[0] == 200)
        # Both leave their message pending (sending paused; the model call postponed): the log says why.
        daemon.wait_for_line("access token was refused")
        daemon.wait_for_line("postponed (client: HTTP 401")
        asked = gmail.deliver(mail("ana@cliente.example", "Envío", "¿Tienen envío a Monterrey?"))
        check("extras: Gmail answered", stack.wait_outcome(asked["id"]) == "replied")
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_escalations") >= 1, what="the escalation")
        gmail.control("expire_tokens")
        later = gmail.deliver(mail("luis@cliente.example", "Horario", "¿a qué hora abren?"))
        check("extras: Gmail answered after its access token expired", stack.wait_outcome(later["id"]) == "replied")

        # Staff: a personal token from dispatchctl, one from the admin API, a session cookie.
        ana = stack.add_staff("ana")
        bea = staff_by_admin(stack, "bea")
        cookie, csrf = login(stack, "ana", ana)
        check("extras: staff API with a personal token",
              stack.get("/api/escalations", {"Authorization": f"Bearer {bea}"})[0] == 200)
        check("extras: staff API with the session cookie",
              stack.get("/api/escalations?status=open", {"Cookie": f"dispatchd_session={cookie}",
                                                         "X-CSRF-Token": csrf})[0] == 200)
        check("extras: a wrong token is 401", stack.get("/api/escalations", {"Authorization": "Bearer nope"})[0] == 401)
        escalation = str(stack.scalar("SELECT escalation_id FROM v_escalations LIMIT 1"))
        for path in (f"/api/escalations/{escalation}", "/api/catalog", "/staff/"):
            status, body = stack.get(path, {"Authorization": f"Bearer {ana}"})
            check(f"extras: GET {path}", status == 200, (status, body[:200]))
        for path, want in (("/metrics", 200), ("/readyz", 503), ("/healthz", 200)):  # 503: WhatsApp sending paused
            status, body = stack.get(path)
            check(f"extras: GET {path}", status == want, (status, body[:200]))

        mail_file = os.path.join(stack.dir, "mail.eml")
        with open(mail_file, "wb") as f:
            f.write(mail("ana@cliente.example", "Envío", "¿Tienen envío a Monterrey?"))
        commands = [("queue", "list"), ("queue", "list", "--json"), ("queue", "show", escalation),
                    ("queue", "show", escalation, "--json"), ("audit",), ("audit", "--json"), ("audit", "verify"),
                    ("staff", "list"), ("staff", "list", "--json")]
        failed = [c for c in commands if stack.dispatchctl(*c).returncode != 0]
        if stack.dispatchctl("inspect", "email", mail_file, config=False).returncode != 0:
            failed.append("inspect email")
        # On PostgreSQL backup exits 1 with the pg_dump command to use (its output is searched too).
        if stack.dispatchctl("backup", os.path.join(stack.dir, "backup.db")).returncode != (1 if ON_POSTGRESQL else 0):
            failed.append("backup")
        check("extras: dispatchctl queue, audit, staff, inspect and backup commands end as documented", not failed,
              failed)

        checked = harness.Process([os.path.join(BUILD, "daemon", "dispatchd"), "--config", stack.config_path,
                                   "--check-config"], env=stack.env, name="dispatchd-check-config")
        check("extras: dispatchd --check-config exits 0", checked.proc.wait(60) == 0, checked.lines)

        # invalid_grant, then a reload with a new refresh token.
        gmail.control("revoke")
        waiting = gmail.deliver(mail("marta@cliente.example", "Envío", "¿Tienen envío a Puebla?"))
        daemon.wait_for_line("gmail: paused")
        stack.get("/readyz")
        stack.get("/metrics")
        gmail.control("refresh_token", {"value": NEW_REFRESH})
        stack.write_credential("GMAIL_REFRESH_TOKEN", NEW_REFRESH)
        daemon.proc.send_signal(signal.SIGHUP)
        check("extras: a reload with a new refresh token resumes Gmail", stack.wait_outcome(waiting["id"]) == "replied")
        check("extras: the audit chain verifies", stack.audit_verify().returncode == 0)


def scan_flow():
    present = [name for name in E2E_TESTS if os.path.isdir(os.path.join(AUDIT_ROOT, name))]
    check("the e2e tests' records are there (run through CTest, which runs them first)",
          present == list(E2E_TESTS), f"found {present} under {AUDIT_ROOT}")
    secrets = known_secrets()
    scan = secrets_scan.Scan(secrets)
    scan.tree(AUDIT_ROOT, harness.LLM_KEY)
    print(f"scanned {scan.files} files, {scan.bytes} bytes, for {len(secrets)} secrets "
          f"({len(scan.needles)} forms):", flush=True)
    for kind, (files, size) in sorted(scan.by_kind.items()):
        print(f"  {kind:16} {files:5} files {size:12} bytes", flush=True)
    made = list(secrets_scan.made_during_run(AUDIT_ROOT))
    print(f"  secrets made during the runs: {len(made)} (staff tokens, sessions, Gmail access tokens)", flush=True)
    print(f"  model requests: {scan.model_requests}, {scan.authorized_with_llm_key} with the LLM key as their bearer",
          flush=True)
    for kind in ("out-dispatchd", "dispatchctl", "http", "stack", "model-requests"):
        check(f"scanned: {kind} records", scan.by_kind.get(kind, [0, 0])[1] > 0, scan.by_kind)
    if ON_POSTGRESQL:
        check("scanned: the databases' dumps", any(name == "database.sql" for _, _, files in os.walk(AUDIT_ROOT)
                                                    for name in files))
    else:
        check("scanned: SQLite files", any(name.endswith((".db", ".db-wal")) for _, _, files in os.walk(AUDIT_ROOT)
                                           for name in files))
    check("scanned: Gmail access tokens and staff tokens were issued",
          any("gmail-access-tokens" in name for name in made) and any("staff-token" in name for name in made))
    check("every model request carried the LLM key, in its Authorization header only",
          scan.model_requests > 0 and scan.authorized_with_llm_key == scan.model_requests,
          (scan.authorized_with_llm_key, scan.model_requests))
    for where, name, form in scan.hits[:200]:
        print(f"  HIT {name} ({form}) in {os.path.relpath(where, AUDIT_ROOT)}", flush=True)
    check("no secret anywhere", not scan.hits, f"{len(scan.hits)} hits")


sys.exit(harness.run_flows((scanner_self_check, extras_flow, scan_flow)))
