#!/usr/bin/env python3
"""fake_gmail: a fake Gmail API v1 and Google OAuth2 token endpoint on 127.0.0.1, for the e2e
tests and the demo. Python 3 standard library only.

  fake_gmail.py [--port N] [--address A] [--client-id ID] [--client-secret S]
                [--refresh-token T] [--token-lifetime S] [--page-size N] [--quiet]
                [--issued-tokens FILE]

stdout is JSON lines: first {"event":"listening","port":N,"api_base_url":"http://127.0.0.1:N",
"token_url":"http://127.0.0.1:N/token"}, then one {"event":"request",...} per request (none with
--quiet; a caller that does not read stdout must pass --quiet, or a full pipe blocks the server).
Exit 0 on SIGINT/SIGTERM, 2 on bad flags. Access tokens are long and unique to the run
(ya29.fake-<random>-<n>) so a search can tell them apart; --issued-tokens appends each one, a line
per token, to FILE (the secrets audit of tests/e2e searches everything else for them).

The wire formats are Google's as documented: the refresh-token grant and its errors
(invalid_grant 400, invalid_client 401); users.getProfile, history.list, messages.list/get
(format=raw|minimal|full)/send/modify, messages.attachments.get, labels.list/create; errors as
{"error":{"code","message","errors":[{"message","domain","reason"}],"status"}}.
Deliberate limits, answered 400 so that a client cannot come to rely on syntax this fake does
not check: messages.list's q takes only after:<epoch seconds>, rfc822msgid:<id>, in:sent and
in:anywhere; messages.get only format=raw, minimal or full. History ids grow in steps of 3 (Gmail's
are not contiguous either).
format=full gives the payload as a MessagePart tree (partId "" for the message's own part,
"0", "1" for its parts, "1.0" inside those; mimeType, filename, headers, body): a part with a
filename gets body {"attachmentId","size"} (fetched with messages.attachments.get, which
answers the MessagePartBody {"attachmentId","size","data"}, data base64url), any other leaf
its data inline; a message/rfc822 part is a leaf here. `fields` is not applied (the answer
has every field). Page tokens name the last item returned, so new mail arriving
between pages neither repeats nor hides an item.

Control endpoints (JSON in and out, no token) drive the tests and the demo:
  POST /_fake/deliver {"raw": text | "raw_b64url": b64, "labelIds"?, "threadId"?, "internalDate"? (ms),
       "attachment_failures"?: [{"status", "count"? (1), "retry_after"?}]}
       -> {"id","threadId","historyId"}; threaded with a known message it references when no threadId;
       attachment_failures script the message's messages.attachments.get (as /_fake/script) at once
  POST /_fake/revoke             the refresh token now gets invalid_grant; issued tokens stop working
  POST /_fake/refresh_token {"value"}   the refresh token that is valid from now on
  POST /_fake/expire_tokens      every issued access token now answers 401
  POST /_fake/script {"path": substring (e.g. "<id>/attachments/": that message's files), "method"?, "status"?, "body"?, "reason"?, "retry_after"?,
       "delay_ms"?, "count"? (1), "commit_before_delay"?}   the next matching requests answer
       `status` (Google's error body; reason defaults: 429 rateLimitExceeded, 403 forbidden) after
       `delay_ms`; with commit_before_delay the request is carried out first, then the delay, then
       the answer (the scripted status, or the real one): a send whose answer is lost
  POST /_fake/forget_history {"before": historyId | "all"}   older startHistoryIds answer 404
  POST /_fake/reset              a fresh mailbox, as at start
  GET  /_fake/state  -> {"address","history_id","history_floor","messages":[{"id","threadId",
       "labelIds","message_id"}],"sent":[{"id","threadId","raw"}],"requests":[{"method","path",
       "query","status","t"}],"token_requests":N,"modified":[{"id","addLabelIds","removeLabelIds"}]}
       (a request's "t": when it was answered, epoch seconds)
"""

import argparse
import base64
import email
import email.policy
import json
import secrets
import signal
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

API_PREFIX = "/gmail/v1/users/me/"
SCOPE = "https://www.googleapis.com/auth/gmail.modify"
MAX_BODY = 50 * 1024 * 1024  # above Gmail's 35 MB message limit
HISTORY_STEP = 3
SYSTEM_LABELS = ["INBOX", "SENT", "UNREAD", "STARRED", "IMPORTANT", "TRASH", "SPAM", "DRAFT",
                 "CATEGORY_PERSONAL", "CATEGORY_SOCIAL", "CATEGORY_PROMOTIONS", "CATEGORY_UPDATES",
                 "CATEGORY_FORUMS"]
STATUS_NAMES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                404: "NOT_FOUND", 409: "ALREADY_EXISTS", 429: "RESOURCE_EXHAUSTED",
                500: "INTERNAL", 503: "UNAVAILABLE"}
DEFAULT_REASONS = {400: "invalidArgument", 401: "authError", 403: "forbidden", 404: "notFound",
                   409: "duplicate", 429: "rateLimitExceeded", 500: "backendError", 503: "backendError"}
DEFAULT_MESSAGES = {401: "Request had invalid authentication credentials. Expected OAuth 2 access token, "
                         "login cookie or other valid authentication credential.",
                    404: "Requested entity was not found.",
                    429: "Resource has been exhausted (e.g. check quota).",
                    500: "Backend Error", 503: "The service is currently unavailable."}


class HttpError(Exception):
    """An answer other than 200, raised from inside a handler while the state lock is held."""

    def __init__(self, status, body, headers=None):
        super().__init__(status)
        self.status, self.body, self.headers = status, body, headers or {}


def google_error(code, message=None, reason=None):
    message = message or DEFAULT_MESSAGES.get(code, "Request failed")
    return {"error": {"code": code, "message": message,
                      "errors": [{"message": message, "domain": "global",
                                  "reason": reason or DEFAULT_REASONS.get(code, "unknown")}],
                      "status": STATUS_NAMES.get(code, "UNKNOWN")}}


def fail(code, message=None, reason=None):
    raise HttpError(code, google_error(code, message, reason))


def b64url_decode(text):
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, TypeError):
        fail(400, "Invalid value for ByteString: " + str(text)[:40])


def header_of(raw, name):
    # compat32 never raises on a malformed header: the fake must accept whatever a test sends.
    value = email.message_from_bytes(raw, policy=email.policy.compat32).get(name)
    return str(value).strip() if value is not None else ""


def bare_message_id(value):
    return value.strip().strip("<>").strip()


def snippet_of(raw):
    try:
        body = email.message_from_bytes(raw, policy=email.policy.default).get_body(("plain", "html"))
        return " ".join((body.get_content() if body else "").split())[:100]
    except Exception:  # a snippet is cosmetic; malformed test mail must still be stored
        return ""


class Mailbox:
    """All state, guarded by self.lock. Handlers call the methods with the lock held."""

    def __init__(self, options):
        self.lock = threading.Lock()
        self.options = options
        self.refresh_token = options.refresh_token
        self.tokens = {}  # access token -> expiry (wall clock seconds)
        self.token_counter = 0
        self.token_requests = 0
        self.history_id = 1000
        self.history_floor = 0  # a startHistoryId below it answers 404
        self.history = []  # {"id", "type", "message", "labelIds"(for label events)}
        self.messages = {}  # id -> dict
        self.counter = 0
        self.labels = [{"id": name, "name": name, "type": "system"} for name in SYSTEM_LABELS]
        self.label_counter = 0
        self.scripts = []
        self.requests = []
        self.sent = []
        self.modified = []

    def next_id(self):
        self.counter += 1
        return "%016x" % (0x18c0000000000000 + self.counter)

    def next_history_id(self):
        self.history_id += HISTORY_STEP
        return self.history_id

    # OAuth2 ---------------------------------------------------------------------------------
    def grant(self, form):
        self.token_requests += 1
        grant_type = form.get("grant_type", "")
        if grant_type != "refresh_token":
            raise HttpError(400, {"error": "unsupported_grant_type",
                                  "error_description": "Invalid grant_type: " + grant_type})
        if form.get("client_id") != self.options.client_id or form.get("client_secret") != self.options.client_secret:
            raise HttpError(401, {"error": "invalid_client", "error_description": "Unauthorized"})
        if not form.get("refresh_token"):
            raise HttpError(400, {"error": "invalid_request", "error_description": "Missing required parameter: refresh_token"})
        if self.refresh_token is None or form["refresh_token"] != self.refresh_token:
            raise HttpError(400, {"error": "invalid_grant", "error_description": "Token has been expired or revoked."})
        self.token_counter += 1
        token = "ya29.fake-%s-%06d" % (self.options.token_salt, self.token_counter)
        self.tokens[token] = time.time() + self.options.token_lifetime
        if self.options.issued_tokens:
            with open(self.options.issued_tokens, "a") as f:
                f.write(token + "\n")
        return {"access_token": token, "expires_in": self.options.token_lifetime, "scope": SCOPE,
                "token_type": "Bearer"}

    def authorize(self, header):
        token = header[len("Bearer "):] if header and header.startswith("Bearer ") else None
        if token is None or self.tokens.get(token, 0) <= time.time():
            raise HttpError(401, google_error(401), {"WWW-Authenticate": 'Bearer realm="https://accounts.google.com/"'})

    # Messages -------------------------------------------------------------------------------
    def add_message(self, raw, label_ids, thread_id=None, internal_date=None):
        message_id = bare_message_id(header_of(raw, "Message-ID"))
        if thread_id is None:
            thread_id = self.thread_of_references(raw)
        message = {"id": self.next_id(), "labelIds": list(label_ids), "raw": raw, "message_id": message_id,
                   "internalDate": int(internal_date if internal_date is not None else time.time() * 1000)}
        message["threadId"] = thread_id or message["id"]
        message["historyId"] = self.next_history_id()
        self.messages[message["id"]] = message
        self.history.append({"id": message["historyId"], "type": "messageAdded", "message": message["id"],
                             "labelIds": list(label_ids)})
        return message

    def thread_of_references(self, raw):
        # Gmail threads a delivered reply with the message it answers; so does the fake.
        wanted = (header_of(raw, "In-Reply-To") + " " + header_of(raw, "References")).split()
        wanted = {bare_message_id(item) for item in wanted}
        for message in self.messages.values():
            if message["message_id"] and message["message_id"] in wanted:
                return message["threadId"]
        return None

    def message_or_404(self, message_id):
        if message_id not in self.messages:
            fail(404)
        return self.messages[message_id]

    def known_label(self, label_id):
        return any(label["id"] == label_id for label in self.labels)

    def modify(self, message_id, body):
        message = self.message_or_404(message_id)
        add, remove = body.get("addLabelIds") or [], body.get("removeLabelIds") or []
        for label in add + remove:
            if not self.known_label(label):
                fail(400, "Invalid label: " + str(label))
        added = [label for label in add if label not in message["labelIds"]]
        removed = [label for label in remove if label in message["labelIds"]]
        message["labelIds"] = [label for label in message["labelIds"] if label not in removed] + added
        for kind, labels in (("labelAdded", added), ("labelRemoved", removed)):
            if labels:
                message["historyId"] = self.next_history_id()
                self.history.append({"id": message["historyId"], "type": kind, "message": message_id,
                                     "labelIds": labels})
        self.modified.append({"id": message_id, "addLabelIds": add, "removeLabelIds": remove})
        return {"id": message_id, "threadId": message["threadId"], "labelIds": message["labelIds"]}

    def send(self, body):
        if not isinstance(body, dict) or not isinstance(body.get("raw"), str):
            fail(400, "'raw' RFC822 payload message string or uploading message via /upload/* URL required")
        raw = b64url_decode(body["raw"])
        if not any(header_of(raw, name) for name in ("To", "Cc", "Bcc")):
            fail(400, "Recipient address required")
        thread_id = body.get("threadId")
        if thread_id is not None and not any(m["threadId"] == thread_id for m in self.messages.values()):
            fail(400, "Invalid thread_id value")
        message = self.add_message(raw, ["SENT"], thread_id or None)
        self.sent.append({"id": message["id"], "threadId": message["threadId"],
                          "raw": raw.decode("utf-8", "replace")})
        return {"id": message["id"], "threadId": message["threadId"], "labelIds": message["labelIds"]}

    def get(self, message_id, query):
        message = self.message_or_404(message_id)
        fmt = query.get("format", ["full"])[0]
        if fmt not in ("raw", "minimal", "full"):
            fail(400, "fake_gmail answers only format=raw, minimal or full")
        out = {"id": message["id"], "threadId": message["threadId"], "labelIds": message["labelIds"],
               "snippet": snippet_of(message["raw"]), "historyId": str(message["historyId"]),
               "internalDate": str(message["internalDate"]), "sizeEstimate": len(message["raw"])}
        if fmt == "raw":
            out["raw"] = base64.urlsafe_b64encode(message["raw"]).decode()
        if fmt == "full":
            out["payload"] = message_part(message["id"], "", email.message_from_bytes(message["raw"],
                                                                                   policy=email.policy.compat32), {})
        return out

    def attachment(self, message_id, attachment_id):
        message = self.message_or_404(message_id)
        found = {}
        message_part(message["id"], "", email.message_from_bytes(message["raw"], policy=email.policy.compat32), found)
        if attachment_id not in found:
            fail(400, "Invalid attachment token")
        data = found[attachment_id]
        return {"attachmentId": attachment_id, "size": len(data), "data": base64.urlsafe_b64encode(data).decode()}

    def list_messages(self, query):
        matches = self.query_filter(query.get("q", [""])[0], query.get("labelIds", []))
        matches.sort(key=lambda m: (m["internalDate"], m["id"]), reverse=True)
        token = query.get("pageToken", [None])[0]
        if token:
            date, _, last = token.partition(".")
            matches = [m for m in matches if (m["internalDate"], m["id"]) < (int(date), last)]
        page = matches[:page_size(query, self.options.page_size)]
        out = {"resultSizeEstimate": len(matches)}
        if page:
            out["messages"] = [{"id": m["id"], "threadId": m["threadId"]} for m in page]
        if len(matches) > len(page):
            out["nextPageToken"] = "%d.%s" % (page[-1]["internalDate"], page[-1]["id"])
        return out

    def query_filter(self, q, label_ids):
        after, msgid, sent, anywhere = None, None, False, False
        for token in q.split():
            name, _, value = token.partition(":")
            if name == "after" and value.isdigit():
                after = int(value) * 1000
            elif name == "rfc822msgid" and value:
                msgid = bare_message_id(value)
            elif token == "in:sent":
                sent = True
            elif token == "in:anywhere":
                anywhere = True
            else:
                fail(400, "Invalid query: fake_gmail does not support '%s'" % token)
        out = []
        for m in self.messages.values():
            labels = m["labelIds"]
            if (not anywhere and ("SPAM" in labels or "TRASH" in labels)) or (sent and "SENT" not in labels):
                continue
            if (after is not None and m["internalDate"] <= after) or (msgid is not None and m["message_id"] != msgid):
                continue
            if all(label in labels for label in label_ids):
                out.append(m)
        return out

    # History ----------------------------------------------------------------------------------
    def list_history(self, query):
        start = query.get("startHistoryId", [""])[0]
        if not start.isdigit():
            fail(400, "Invalid startHistoryId" if start else "Required parameter: startHistoryId")
        start = int(start)
        if start < self.history_floor:
            fail(404)
        token = query.get("pageToken", [None])[0]
        after = max(start, int(token)) if token and token.isdigit() else start
        types = query.get("historyTypes", [])
        label = query.get("labelId", [None])[0]
        records = [r for r in self.history if r["id"] > after and (not types or r["type"] in types)
                   and (label is None or label in self.labels_at(r))]
        page = records[:page_size(query, self.options.page_size)]
        out = {"historyId": str(self.history_id)}
        if page:
            out["history"] = [self.history_record(r) for r in page]
        if len(records) > len(page):
            out["nextPageToken"] = str(page[-1]["id"])
        return out

    def labels_at(self, record):
        message = self.messages.get(record["message"])
        return record["labelIds"] if record["type"] == "messageAdded" else (message or {}).get("labelIds", [])

    def history_record(self, record):
        message = self.messages[record["message"]]
        brief = {"id": message["id"], "threadId": message["threadId"]}
        out = {"id": str(record["id"]), "messages": [brief]}
        full = dict(brief, labelIds=list(record["labelIds"]) if record["type"] == "messageAdded" else message["labelIds"])
        if record["type"] == "messageAdded":
            out["messagesAdded"] = [{"message": full}]
        else:
            out[record["type"] + "s"] = [{"message": full, "labelIds": record["labelIds"]}]
        return out

    def forget_history(self, before):
        self.history_floor = self.history_id if before == "all" else int(before)
        self.history = [r for r in self.history if r["id"] >= self.history_floor]
        return {"history_floor": self.history_floor}

    # Labels and profile -----------------------------------------------------------------------
    def create_label(self, body):
        name = body.get("name") if isinstance(body, dict) else None
        if not isinstance(name, str) or not name.strip():
            fail(400, "Invalid label name")
        if any(label["name"].lower() == name.lower() for label in self.labels):
            fail(409, "Label name exists or conflicts")
        self.label_counter += 1
        label = {"id": "Label_%d" % self.label_counter, "name": name, "type": "user"}
        self.labels.append(label)
        return label

    def profile(self):
        return {"emailAddress": self.options.address, "messagesTotal": len(self.messages),
                "threadsTotal": len({m["threadId"] for m in self.messages.values()}),
                "historyId": str(self.history_id)}

    def state(self):
        return {"address": self.options.address, "history_id": self.history_id,
                "history_floor": self.history_floor,
                "messages": [{"id": m["id"], "threadId": m["threadId"], "labelIds": m["labelIds"],
                              "message_id": m["message_id"]} for m in self.messages.values()],
                "sent": list(self.sent), "requests": list(self.requests), "token_requests": self.token_requests,
                "modified": list(self.modified)}


def message_part(message_id, part_id, part, attachments):
    """Gmail's MessagePart of `part` (email.message.Message); the bytes of each part given an
    attachmentId go into `attachments` by that id."""
    out = {"partId": part_id, "mimeType": part.get_content_type(), "filename": part.get_filename() or "",
           "headers": [{"name": k, "value": str(v)} for k, v in part.items()]}
    if part.is_multipart() and part.get_content_maintype() == "multipart":
        out["body"] = {"size": 0}
        out["parts"] = [message_part(message_id, (part_id + "." if part_id else "") + str(i), child, attachments)
                        for i, child in enumerate(part.get_payload())]
        return out
    if part.get_content_type() == "message/rfc822":
        inner = part.get_payload()
        data = inner[0].as_bytes() if isinstance(inner, list) and inner else b""
    else:
        data = part.get_payload(decode=True) or b""
    if out["filename"]:
        attachment_id = "ANGjdJ-" + base64.urlsafe_b64encode(("%s/%s" % (message_id, part_id)).encode()).decode().rstrip("=")
        attachments[attachment_id] = data
        out["body"] = {"attachmentId": attachment_id, "size": len(data)}
    else:
        out["body"] = {"size": len(data), "data": base64.urlsafe_b64encode(data).decode()}
    return out


def page_size(query, default):
    value = query.get("maxResults", [""])[0]
    return max(1, min(500, int(value))) if value.isdigit() else default


def deliver(box, body):
    if "raw_b64url" in body:
        raw = b64url_decode(body["raw_b64url"])
    elif isinstance(body.get("raw"), str):
        raw = body["raw"].encode("utf-8")
    else:
        fail(400, "deliver needs raw or raw_b64url")
    message = box.add_message(raw, body.get("labelIds", ["INBOX", "UNREAD"]), body.get("threadId"),
                              body.get("internalDate"))
    for failure in body.get("attachment_failures") or []:
        # Scripted with the message: its attachments.get answers `status` `count` times.
        box.scripts.append(dict(failure, path=message["id"] + "/attachments/", method="GET",
                                count=int(failure.get("count", 1))))
    return {"id": message["id"], "threadId": message["threadId"], "historyId": str(message["historyId"])}


def revoke(box, _body):
    box.refresh_token = None
    box.tokens.clear()
    return {"ok": True}


def set_refresh_token(box, body):
    box.refresh_token = body["value"]
    return {"ok": True}


def expire_tokens(box, _body):
    box.tokens.clear()
    return {"ok": True}


def add_script(box, body):
    if not isinstance(body.get("path"), str):
        fail(400, "script needs a path")
    box.scripts.append(dict(body, count=int(body.get("count", 1))))
    return {"ok": True}


def reset(box, _body):
    # A fresh mailbox in place of this one, as at start: tests share one server process.
    fresh = Mailbox(box.options)
    box.__dict__.update({k: v for k, v in fresh.__dict__.items() if k != "lock"})
    return {"ok": True}


CONTROL = {"/_fake/deliver": deliver, "/_fake/reset": reset, "/_fake/revoke": revoke, "/_fake/refresh_token": set_refresh_token,
           "/_fake/expire_tokens": expire_tokens, "/_fake/script": add_script,
           "/_fake/forget_history": lambda box, body: box.forget_history(body.get("before", "all"))}


def take_script(box, method, path):
    for script in box.scripts:
        if script["path"] in path and script.get("method", method) == method and script["count"] > 0:
            script["count"] -= 1
            return script
    return None


def scripted(script):
    status = int(script["status"])
    body = script.get("body") or google_error(status, None, script.get("reason"))
    headers = {"Retry-After": str(script["retry_after"])} if "retry_after" in script else {}
    return status, body, headers


def route_api(box, method, rest, query, body):
    parts = rest.split("/")
    if method == "GET" and rest == "profile":
        return box.profile()
    if method == "GET" and rest == "history":
        return box.list_history(query)
    if method == "GET" and rest == "messages":
        return box.list_messages(query)
    if method == "POST" and rest == "messages/send":
        return box.send(body)
    if method == "GET" and len(parts) == 2 and parts[0] == "messages":
        return box.get(parts[1], query)
    if method == "GET" and len(parts) == 4 and parts[0] == "messages" and parts[2] == "attachments":
        return box.attachment(parts[1], urllib.parse.unquote(parts[3]))
    if method == "POST" and len(parts) == 3 and parts[0] == "messages" and parts[2] == "modify":
        return box.modify(parts[1], body if isinstance(body, dict) else {})
    if method == "GET" and rest == "labels":
        return {"labels": box.labels}
    if method == "POST" and rest == "labels":
        return box.create_label(body)
    fail(404)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as libcurl expects from Google

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def handle_any(self, method):
        url = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self.close_connection = True
            return self.answer(method, url, 413, google_error(413, "Request Entity Too Large", "uploadTooLarge"), {})
        data = self.rfile.read(length)
        box = self.server.mailbox
        script = None
        with box.lock:
            if not url.path.startswith("/_fake/"):
                script = take_script(box, method, url.path)
        commit_first = bool(script and script.get("commit_before_delay"))
        delay = script.get("delay_ms", 0) / 1000.0 if script else 0
        if delay and not commit_first:
            time.sleep(delay)
        if script and script.get("status") and not commit_first:
            # A scripted failure answers without touching state.
            return self.answer(method, url, *scripted(script))
        status, body, headers = self.dispatch(method, url, data)
        if commit_first:
            time.sleep(delay)  # the "answer lost" case: stored, but the client may give up waiting
            if script.get("status"):
                status, body, headers = scripted(script)
        self.answer(method, url, status, body, headers)

    def dispatch(self, method, url, data):
        box = self.server.mailbox
        query = urllib.parse.parse_qs(url.query)
        try:
            with box.lock:
                if method == "POST" and url.path == "/token":
                    form = {k: v[0] for k, v in urllib.parse.parse_qs(data.decode("utf-8", "replace")).items()}
                    return 200, box.grant(form), {}
                body = json.loads(data) if data else {}
                if url.path in CONTROL and method == "POST":
                    return 200, CONTROL[url.path](box, body if isinstance(body, dict) else {}), {}
                if url.path == "/_fake/state" and method == "GET":
                    return 200, box.state(), {}
                if not url.path.startswith(API_PREFIX):
                    fail(404)
                box.authorize(self.headers.get("Authorization"))
                return 200, route_api(box, method, url.path[len(API_PREFIX):], query, body), {}
        except HttpError as error:
            return error.status, error.body, error.headers
        except (ValueError, KeyError, TypeError) as error:
            return 400, google_error(400, "Invalid request: %s" % error), {}

    def answer(self, method, url, status, body, headers):
        payload = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)
        box = self.server.mailbox
        record = {"method": method, "path": url.path, "query": url.query, "status": status, "t": time.time()}
        with box.lock:
            box.requests.append(record)
        if not box.options.quiet:
            emit(dict(record, event="request"))


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that gave up (the "answer lost" script) is expected; anything else is a bug.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


OUT_LOCK = threading.Lock()


def emit(line):
    with OUT_LOCK:
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="fake_gmail", description="fake Gmail API + OAuth2 on 127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--address", default="support@example.com")
    parser.add_argument("--client-id", default="fake-client-id.apps.googleusercontent.com")
    parser.add_argument("--client-secret", default="fake-client-secret")
    parser.add_argument("--refresh-token", default="1//fake-refresh-token")
    parser.add_argument("--token-lifetime", type=int, default=3600)
    parser.add_argument("--page-size", type=int, default=100)
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--issued-tokens", default=None)
    options = parser.parse_args(argv)  # exits 2 on bad flags
    options.token_salt = secrets.token_hex(16)  # survives /_fake/reset: tokens never repeat in a run
    return options


def stop(_signum, _frame):
    raise SystemExit(0)


def main(argv):
    options = parse_args(argv)
    server = Server(("127.0.0.1", options.port), Handler)
    server.mailbox = Mailbox(options)
    port = server.server_address[1]
    base = "http://127.0.0.1:%d" % port
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    emit({"event": "listening", "port": port, "api_base_url": base, "token_url": base + "/token"})
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
