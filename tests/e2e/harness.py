"""Runs the real dispatchd against the fake model and the fake Graph API on 127.0.0.1.

Shared by the end-to-end tests (tests/e2e/), the demo (scripts/demo.sh) and the daemon
benchmark (bench/): it writes a config in a temporary folder, starts the three processes,
signs webhook bodies as Meta does, and reads the SQLite views.

Secrets audit: with DISPATCHD_SECRETS_AUDIT_DIR set, everything the stack says or
keeps is also written under that folder for tests/e2e/secrets_test.py to search for the secrets
below: every Process's output (stderr included), every dispatchctl output (run through
Stack.dispatchctl), every answer dispatchd gives the harness (status and body, not the request),
each request the model fake received (fake_model --dump-requests) and, at close, every file of the
stack's folder but the credentials (the SQLite file, its -wal/-shm, backups; on PostgreSQL a
pg_dump of the stack's database, database.sql). Secrets made during
the run (staff tokens, the fake Gmail's access tokens) go to *.secrets files there.
"""
import base64
import hashlib
import hmac
import itertools
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

# Long and distinctive, one per secret, so that a search of everything the stack wrote finds
# any of them (and in no other way by chance).
LLM_KEY = "sk-live-LLMKEY-5f2c9a81d7e34b6f0a9c2e71b58d3f46"
APP_SECRET = "appsecret-WAAPP-8b1e4d7a2c9f30e5b6a1d8c4f72e9b03"
VERIFY_TOKEN = "verify-WAVERIFY-3c7a9e15f0b24d86a1e5c9b3d7f20a64"
ACCESS_TOKEN = "EAAG-WAACCESS-e4b7c1a9d3f58026b9e1c7a4d2f63b85"
STAFF_TOKEN = "staff-ADMIN-9d2f6b1e8a4c37059e2b8d6f1a4c73e0"
PHONE_NUMBER_ID = "109876543210001"

AUDIT_DIR = os.environ.get("DISPATCHD_SECRETS_AUDIT_DIR") or None
_audit_serial = itertools.count()


def audit_path(kind, suffix=""):
    """A fresh path in the secrets audit folder (None when the audit is off)."""
    if not AUDIT_DIR:
        return None
    os.makedirs(AUDIT_DIR, exist_ok=True)
    return os.path.join(AUDIT_DIR, f"{kind}-{os.getpid()}-{next(_audit_serial)}{suffix}")


def audit_write(kind, text, suffix=".txt"):
    path = audit_path(kind, suffix)
    if path:
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text)


def remember_secret(value, kind="staff-token"):
    """A secret made during the run, for the audit to search for."""
    audit_write(kind, value + "\n", ".secrets")


def sign(body: bytes, secret: str = APP_SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def text_webhook(wamid: str, sender: str, text: str, timestamp: int | None = None) -> bytes:
    """A Cloud API webhook with one text message, serialized as Meta does (non-ASCII escaped)."""
    payload = {"object": "whatsapp_business_account", "entry": [{"id": "1023456789012345", "changes": [{
        "field": "messages", "value": {
            "messaging_product": "whatsapp",
            "metadata": {"display_phone_number": "15550001234", "phone_number_id": PHONE_NUMBER_ID},
            "contacts": [{"profile": {"name": "Cliente"}, "wa_id": sender}],
            "messages": [{"from": sender, "id": wamid, "timestamp": str(timestamp or int(time.time())),
                          "type": "text", "text": {"body": text}}]}}]}]}
    return json.dumps(payload, ensure_ascii=True, separators=(",", ":")).encode()


def media_webhook(wamid: str, sender: str, kind: str, media_id: str, mime: str, sha256: str = "",
                  extra: dict | None = None) -> bytes:
    """A Cloud API webhook with one media message (`kind`: image, audio, video, document,
    sticker) naming the file `media_id`, its `sha256` as given (hex or base64; "" for none)."""
    body = {"id": media_id, "mime_type": mime, "sha256": sha256, **(extra or {})}
    payload = {"object": "whatsapp_business_account", "entry": [{"id": "1023456789012345", "changes": [{
        "field": "messages", "value": {
            "messaging_product": "whatsapp",
            "metadata": {"display_phone_number": "15550001234", "phone_number_id": PHONE_NUMBER_ID},
            "contacts": [{"profile": {"name": "Cliente"}, "wa_id": sender}],
            "messages": [{"from": sender, "id": wamid, "timestamp": str(int(time.time())),
                          "type": kind, kind: body}]}}]}]}
    return json.dumps(payload, separators=(",", ":")).encode()


def status_webhook(wamid: str, recipient: str, status: str, error_code: int | None = None,
                   pricing: dict | None = None) -> bytes:
    """A status webhook for one of our messages. `pricing`: its pricing object in Meta's shape
    ({"billable", "pricing_model", "category", "type"?}), with the conversation object Meta
    sends next to it (origin type = the category)."""
    event = {"id": wamid, "status": status, "timestamp": str(int(time.time())), "recipient_id": recipient}
    if pricing is not None:
        event["conversation"] = {"id": "c0nv" + hashlib.sha256(wamid.encode()).hexdigest()[:28],
                                 "origin": {"type": pricing.get("category", "")}}
        event["pricing"] = pricing
    if error_code is not None:
        event["errors"] = [{"code": error_code, "title": "Re-engagement message",
                            "message": "Re-engagement message", "error_data": {"details": "outside the window"}}]
    payload = {"object": "whatsapp_business_account", "entry": [{"id": "1023456789012345", "changes": [{
        "field": "messages", "value": {
            "messaging_product": "whatsapp",
            "metadata": {"display_phone_number": "15550001234", "phone_number_id": PHONE_NUMBER_ID},
            "statuses": [event]}}]}]}
    return json.dumps(payload, separators=(",", ":")).encode()


def bearer_call(url, method, token, body=None):
    """A JSON request with `Authorization: Bearer token` (a staff API call): (status, the JSON
    answer), (status, its text) for an HTTP error, (None, the error) when nothing answered."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")
    except OSError as error:
        return None, repr(error)


class Process:
    """A child process whose stdout lines are collected by a thread."""

    def __init__(self, argv, env=None, name=""):
        self.name = name or os.path.basename(argv[0])
        self.lines = []
        record = audit_path("out-" + self.name, ".log")
        self._record = open(record, "w", buffering=1, encoding="utf-8") if record else None
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
                                     bufsize=1)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            if self._record:
                self._record.write(line)
        if self._record:
            self._record.close()

    def wait_for_line(self, needle, timeout=20.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for line in list(self.lines):
                if needle in line:
                    return line
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        raise RuntimeError(f"{self.name}: no line with {needle!r}; output:\n" + "\n".join(self.lines[-40:]))

    def stop(self, sig=signal.SIGTERM, timeout=20.0):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


# What a test script checked: check() prints one line per check and run_flows() runs the
# script's flows (one failing or hanging does not stop the others) and gives the exit code.
results = []
failures = []  # the lines of failed checks, printed again at the end


def check(name, condition, detail=""):
    results.append(bool(condition))
    line = ("pass " if condition else "FAIL ") + name + ("" if condition else f": {detail}")
    if not condition:
        failures.append(line)
    print(line, flush=True)


def model_turns(dump_path):
    """Every text dispatchd sent the model (fake_model --dump-requests), request by request."""
    turns = []
    if not os.path.exists(dump_path):
        return turns
    with open(dump_path, encoding="utf-8") as f:
        for line in f:
            body = json.loads(json.loads(line)["body"])
            texts = []
            for m in body.get("messages", []):
                content = m.get("content")
                if isinstance(content, str):
                    texts.append(content)
                elif isinstance(content, list):  # a turn with files: its text parts
                    texts.append("".join(p.get("text", "") for p in content if p.get("type") == "text"))
            turns.append("\n".join(texts))
    return turns


def run_flows(flows):
    for flow in flows:
        try:
            flow()
        except Exception as error:  # a hang or crash of one flow is a failure, the others still run
            check(getattr(flow, "__name__", "flow"), False, repr(error))
    # The failures again, last: CI shows a long log's head and tail, and the middle may be cut.
    for line in failures:
        print(line[:2000])
    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


def merge(base: dict, extra: dict) -> dict:
    """Merges `extra` into `base`: nested objects key by key, anything else replaced."""
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merge(base[key], value)
        else:
            base[key] = value
    return base


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class NotifySocket:
    """A NOTIFY_SOCKET to hand dispatchd: collects what it tells systemd."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(0.2)
        self.received = []

    def drain(self):
        """Everything received so far, one datagram per entry (waits 0.2 s for the last)."""
        while True:
            try:
                self.received.append(self.sock.recv(4096).decode())
            except socket.timeout:
                return self.received

    def close(self):
        self.sock.close()


CLUSTER_SH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "postgresql", "cluster.sh")


def postgresql_server(command, folder):
    """tests/postgresql/cluster.sh COMMAND FOLDER (start, stop, restart, kill)."""
    subprocess.run(["bash", CLUSTER_SH, command, folder], check=True, stdout=subprocess.DEVNULL)


def on_private_postgresql(flow, prefix):
    """A flow for run_flows: `flow(folder)` with a PostgreSQL server of its own in `folder`
    (started by the flow, which may kill or restart it), stopped and deleted after."""
    def run():
        with tempfile.TemporaryDirectory(prefix=prefix) as folder:
            try:
                flow(folder)
            finally:
                postgresql_server("stop", folder)
    run.__name__ = flow.__name__
    return run


_databases_made = itertools.count(1)


def unique_database_name():
    """A database name no other test process on the server uses now."""
    return f"e2e_{os.getpid()}_{next(_databases_made)}"


class PostgresqlDatabase:
    """A fresh database on a test server started by tests/postgresql/cluster.sh (its DIR).
    Read through psql (the server's own client: no Python driver needed)."""

    def __init__(self, cluster_dir, name):
        self.cluster_dir = cluster_dir
        with open(os.path.join(cluster_dir, "uri")) as f:
            base = f.read().strip()
        with open(os.path.join(cluster_dir, "password")) as f:
            self.password = f.read().strip()
        self.base_uri = base
        self.uri = base.rsplit("/", 1)[0] + "/" + name
        self.name = name
        self._psql(["-c", f'DROP DATABASE IF EXISTS "{name}"', "-c", f'CREATE DATABASE "{name}"'], base)

    def _psql(self, args, uri=None):
        run = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", uri or self.uri] + args,
                             capture_output=True, text=True, env=dict(os.environ, PGPASSWORD=self.password),
                             timeout=60)
        if run.returncode != 0:
            raise RuntimeError(f"psql: {run.stderr.strip()}")
        return run.stdout

    def dump(self, path):
        """Writes every row of the database to `path` as SQL (pg_dump --data-only): what the
        secrets audit searches on PostgreSQL, as it searches the SQLite file's bytes."""
        run = subprocess.run(["pg_dump", "--data-only", "--no-owner", "--no-privileges", "-d", self.uri, "-f", path],
                             capture_output=True, text=True, env=dict(os.environ, PGPASSWORD=self.password),
                             timeout=120)
        if run.returncode != 0:
            raise RuntimeError(f"pg_dump: {run.stderr.strip()}")

    def drop(self):
        """Drops the database (its connections are closed: the daemon has stopped)."""
        self._psql(["-c", f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)'], self.base_uri)

    def query(self, sql, *args):
        """Rows of `sql` (with SQLite's `?` placeholders) as tuples, in the columns' order."""
        variables = []
        for n, value in enumerate(args, 1):
            sql = sql.replace("?", f":'p{n}'", 1)
            variables += ["-v", f"p{n}={value}"]
        # A psql variable is expanded only in a query read from its input, not in -c.
        wrapped = f"SELECT coalesce(json_agg(r), '[]') FROM (SELECT row_to_json(q) AS r FROM ({sql}) q) t"
        out = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", self.uri] + variables,
                             input=wrapped + ";\n", capture_output=True, text=True,
                             env=dict(os.environ, PGPASSWORD=self.password), timeout=60)
        if out.returncode != 0:
            raise RuntimeError(f"psql: {out.stderr.strip()}")
        return [tuple(row.values()) for row in json.loads(out.stdout)]


class Stack:
    """fake_model + fake_graph + dispatchd, in a temporary folder."""

    def __init__(self, build_dir, source_dir, scenario=None, graph_script=None, catalog="support.es.json",
                 model_latency_ms=0, record=True, extra_config=None, workdir=None, env_extra=None,
                 quiet_graph=False, fake_args=None, database=None, mcp_servers=None, bursts=False,
                 limits=False):
        # fake_args: extra command-line arguments per fake, {"fake_model": [...], "fake_graph": [...]}.
        # bursts: leave agent.burst_quiet_ms at dispatchd's default (else 0: a turn per message).
        # limits: leave agent.limits at dispatchd's default (else off).
        # mcp_servers: the config's mcp.servers (name -> server), none without it. `catalog` is
        # a file of catalog/examples/ or an absolute path.
        # database: a PostgreSQL database (PostgresqlDatabase) instead of a SQLite file. Without
        # one, a run with DISPATCHD_TEST_BACKEND=postgresql (CTest's `e2e[postgresql]` twins)
        # gets a fresh database of its own on the test server, dropped at close().
        fake_args = fake_args or {}
        self._own_pg = database is None and os.environ.get("DISPATCHD_TEST_BACKEND") == "postgresql"
        if self._own_pg:
            database = PostgresqlDatabase(os.environ["DISPATCHD_TEST_POSTGRESQL_DIR"], unique_database_name())
        self.pg = database
        self.build = build_dir
        self.source = source_dir
        self._tmp = None if workdir else tempfile.TemporaryDirectory(prefix="dispatchd-e2e-")
        self.dir = workdir or self._tmp.name
        self.db = database.uri if database else os.path.join(self.dir, "dispatchd.db")
        model_argv = [os.path.join(build_dir, "tests", "fake_model"), "--latency-ms", str(model_latency_ms)]
        if scenario:
            model_argv += ["--scenario", scenario]
        if not record:
            model_argv.append("--no-record")
        if AUDIT_DIR:
            model_argv += ["--dump-requests", audit_path("model-requests", ".jsonl")]
        self.model = Process(model_argv + fake_args.get("fake_model", []), name="fake_model")
        self.model_port = json.loads(self.model.wait_for_line('"listening"'))["port"]
        graph_argv = [os.path.join(build_dir, "tests", "fake_graph"), "--token", ACCESS_TOKEN,
                      "--phone-number-id", PHONE_NUMBER_ID]
        if graph_script:
            graph_argv += ["--script", graph_script]
        if quiet_graph:  # no line per request: graph_messages() then sees nothing
            graph_argv.append("--quiet")
        self.graph = Process(graph_argv + fake_args.get("fake_graph", []), name="fake_graph")
        self.graph_url = json.loads(self.graph.wait_for_line('"listening"'))["base_url"]
        self.port = free_port()
        self.config_path = os.path.join(self.dir, "dispatchd.json")
        config = {
            "database": self.db,
            "catalog": os.path.join(source_dir, "catalog", "examples", catalog),
            "migrations": {"dir": os.path.join(source_dir, "migrations")},
            "http": {"listen": f"127.0.0.1:{self.port}"},
            "llm": {"provider": "openai", "base_url": f"http://127.0.0.1:{self.model_port}/v1", "model": "fake-model",
                    "api_key_env": "DISPATCHD_LLM_KEY", "max_concurrency": 64},
            "connectors": {"whatsapp": {"enabled": True, "graph_base_url": self.graph_url,
                                        "phone_number_id": PHONE_NUMBER_ID,
                                        "access_token_env": "WHATSAPP_ACCESS_TOKEN",
                                        "app_secret_env": "WHATSAPP_APP_SECRET",
                                        "verify_token_env": "WHATSAPP_VERIFY_TOKEN"}},
            "staff": {"token_env": "DISPATCHD_STAFF_TOKEN"},
        }
        if not bursts:
            # Each message its own turn, answered at once: the tests that check bursts
            # (burst_test.py) and the benchmarks keep dispatchd's default.
            config.setdefault("agent", {})["burst_quiet_ms"] = 0
        if not limits:
            # No reply limits nor loop checks: many tests write many messages from one
            # number; limits_test.py checks them.
            config.setdefault("agent", {})["limits"] = {"enabled": False}
        if database:
            config["database_password_env"] = "DISPATCHD_DB_PASSWORD"
        if mcp_servers:
            config["mcp"] = {"servers": mcp_servers}
        merge(config, extra_config or {})
        with open(self.config_path, "w") as f:
            json.dump(config, f, indent=2)
        self.env = dict(os.environ, DISPATCHD_LLM_KEY=LLM_KEY, WHATSAPP_ACCESS_TOKEN=ACCESS_TOKEN,
                        WHATSAPP_APP_SECRET=APP_SECRET, WHATSAPP_VERIFY_TOKEN=VERIFY_TOKEN,
                        DISPATCHD_STAFF_TOKEN=STAFF_TOKEN, **(env_extra or {}))
        if database:
            self.env["DISPATCHD_DB_PASSWORD"] = database.password
        self.daemon = None

    def dump_model_requests(self, scenario):
        """Restarts the fake model (before the daemon starts) on its port with `scenario`,
        dumping each request it receives; returns the dump's path (read it with model_turns)."""
        dump = os.path.join(self.dir, "model-requests.jsonl")
        self.model.stop()
        self.model = Process([os.path.join(self.build, "tests", "fake_model"), "--port", str(self.model_port),
                              "--scenario", scenario, "--dump-requests", dump], name="fake_model")
        self.model.wait_for_line('"listening"')
        return dump

    def start_daemon(self, env_extra=None):
        env = dict(self.env, **(env_extra or {}))
        self.daemon = Process([os.path.join(self.build, "daemon", "dispatchd"), "--config", self.config_path], env=env,
                              name="dispatchd")
        self.daemon.wait_for_line("listening on")
        return self.daemon

    def dispatchctl(self, *args, check=False, token_first=False, config=True):
        """`dispatchctl --config <the stack's> ARGS...` (without --config when `config` is false):
        the CompletedProcess (text). Its output goes to the secrets audit; with token_first, the
        first line (a token dispatchctl prints by design) becomes a secret to search for instead."""
        argv = [os.path.join(self.build, "cli", "dispatchctl")] + (["--config", self.config_path] if config else [])
        done = subprocess.run(argv + list(args), capture_output=True, text=True, env=self.env, check=check)
        stdout = done.stdout
        if token_first and stdout:
            token, _, stdout = stdout.partition("\n")
            remember_secret(token.strip())
        audit_write("dispatchctl", f"$ dispatchctl {' '.join(args)}\nexit {done.returncode}\n{stdout}{done.stderr}")
        return done

    def add_staff(self, name):
        """A staff account made with dispatchctl; returns its personal token."""
        return self.dispatchctl("staff", "add", name, check=True, token_first=True).stdout.splitlines()[0]

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def post_webhook(self, body: bytes, signature: str | None = "sign"):
        headers = {"Content-Type": "application/json"}
        if signature == "sign":
            headers["X-Hub-Signature-256"] = sign(body)
        elif signature is not None:
            headers["X-Hub-Signature-256"] = signature
        request = urllib.request.Request(self.url("/webhooks/whatsapp"), data=body, headers=headers, method="POST")
        return self._call(request)

    def get(self, path, headers=None):
        return self._call(urllib.request.Request(self.url(path), headers=headers or {}))

    @staticmethod
    def _call(request):
        try:
            with urllib.request.urlopen(request, timeout=20) as response:
                status, body = response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            status, body = error.code, error.read().decode()
        # The answer only: the request's query may carry the verify token by design.
        audit_write("http", f"{request.get_method()} {urllib.parse.urlsplit(request.full_url).path} -> {status}\n{body}")
        return status, body

    def query(self, sql, *args):
        if self.pg:
            return self.pg.query(sql, *args)
        with sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=10) as db:
            return db.execute(sql, args).fetchall()

    def execute(self, sql):
        """Runs a statement that changes rows, on the stack's engine."""
        if self.pg:
            self.pg._psql(["-c", sql])
            return
        with sqlite3.connect(self.db, timeout=10) as db:
            db.execute(sql)

    def scalar(self, sql, *args):
        return self.query(sql, *args)[0][0]

    def raw_payload(self, provider_message_id):
        """The raw payload of an inbound message as bytes, decoded from its raw_encoding
        (store/raw_payload.h: base64 when the bytes are not UTF-8)."""
        text, encoding = self.query("SELECT raw_payload, raw_encoding FROM inbox WHERE provider_message_id = ?",
                                    provider_message_id)[0]
        if encoding == "base64":
            return base64.b64decode(text)
        return text.encode() if isinstance(text, str) else bytes(text)

    def json_text(self, column, key):
        """SQL for the top-level member `key` of the JSON text in `column`, as text, on the
        stack's engine (store/dialect.h's json_text)."""
        if self.pg:
            return f"({column}::jsonb ->> '{key}')"
        return f"json_extract({column}, '$.{key}')"

    def audit_verify(self):
        """`dispatchctl audit verify` on the stack's database: the CompletedProcess."""
        return self.dispatchctl("audit", "verify")

    def graph_requests(self):
        """Every request the fake Graph API logged so far (tests/fakes/fake_graph.h, to_json_line), parsed."""
        out = []
        for line in list(self.graph.lines):
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "request":
                out.append(event)
        return out

    def graph_messages(self, answered=200):
        """The text messages the fake Graph API answered with `answered`: [(to, text, wamid)]."""
        return [(e.get("to"), e.get("text"), e.get("wamid")) for e in self.graph_requests()
                if e.get("type") == "text" and e.get("answered") == answered]

    def graph_reads(self):
        """The read marks the fake Graph API received: [(message_id, typing)], typing "text"
        when the mark showed the typing indicator, else None."""
        return [(e.get("message_id"), e.get("typing")) for e in self.graph_requests() if e.get("status") == "read"]

    def wait_until(self, predicate, timeout=30.0, what="condition"):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if predicate():
                return
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}")

    def close(self):
        for p in (self.daemon, self.graph, self.model):
            if p:
                p.stop()
        self._keep_files_for_audit()
        if self._tmp:
            self._tmp.cleanup()
        if self._own_pg:
            self.pg.drop()

    def _keep_files_for_audit(self):
        """Copies the stack's folder (database, -wal, -shm, backups, config) into the secrets
        audit, all but the credentials, which hold the secrets by design."""
        target = audit_path("stack")
        if not target:
            return
        if self.pg:  # the rows on the server, dumped
            os.makedirs(target, exist_ok=True)
            self.pg.dump(os.path.join(target, "database.sql"))
        for root, dirs, files in os.walk(self.dir):
            dirs[:] = [d for d in dirs if d != "credentials"]
            for name in files:
                source = os.path.join(root, name)
                if not os.path.isfile(source) or os.path.islink(source):  # sockets, links
                    continue
                copy = os.path.join(target, os.path.relpath(source, self.dir))
                os.makedirs(os.path.dirname(copy), exist_ok=True)
                shutil.copyfile(source, copy)
