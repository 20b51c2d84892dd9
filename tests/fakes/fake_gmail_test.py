#!/usr/bin/env python3
"""Black-box test of tests/fakes/fake_gmail.py: it is started as a process and spoken to over
HTTP on 127.0.0.1, as the e2e tests and the demo do.

usage: fake_gmail_test.py [unittest args]"""

import base64
import json
import os
import subprocess
import sys
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

FAKE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_gmail.py")
CLIENT = {"client_id": "cid", "client_secret": "csecret"}
MAIL = ("From: Ana <ana@example.org>\r\nTo: support@example.com\r\nSubject: Hola\r\n"
        "Message-ID: <{n}@example.org>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nPedido {n}\r\n")


def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


class FakeGmailTest(unittest.TestCase):
    # One server for the whole class (a process start is most of a test's time);
    # /_fake/reset gives each test a fresh mailbox.
    @classmethod
    def setUpClass(cls):
        cls.server = subprocess.Popen(
            [sys.executable, FAKE, "--client-id", "cid", "--client-secret", "csecret", "--refresh-token", "rt-1",
             "--page-size", "2", "--token-lifetime", "60"], stdout=subprocess.PIPE, text=True)
        cls.listening = json.loads(cls.server.stdout.readline())
        cls.base = cls.listening["api_base_url"]
        cls.events = []
        cls.reader = threading.Thread(target=lambda: cls.events.extend(cls.server.stdout))
        cls.reader.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.terminate()
        cls.server.wait(timeout=10)
        cls.reader.join(timeout=10)
        assert cls.server.returncode == 0, cls.server.returncode
        events = [json.loads(line) for line in cls.events]
        assert events and all(e["event"] == "request" and e["status"] for e in events), events[:3]
        assert "Bearer" not in "".join(cls.events)

    def setUp(self):
        self.token = None
        self.call("POST", "/_fake/reset", {})

    def call(self, method, path, body=None, token=True, form=None, timeout=10):
        headers = {}
        data = None
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if token and path.startswith("/gmail/"):
            self.token = self.token or self.grant()[1]["access_token"]
            headers["Authorization"] = "Bearer " + self.token
        request = urllib.request.Request(self.base + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, json.load(response), response.headers
        except urllib.error.HTTPError as error:
            return error.code, json.load(error), error.headers

    def grant(self, refresh_token="rt-1", **client):
        form = dict(CLIENT, grant_type="refresh_token", refresh_token=refresh_token, **client)
        status, body, _ = self.call("POST", "/token", form=form)
        return status, body

    def deliver(self, n, **extra):
        return self.call("POST", "/_fake/deliver", dict({"raw": MAIL.format(n=n)}, **extra))[1]

    def state(self):
        return self.call("GET", "/_fake/state")[1]

    def test_listening_line(self):
        self.assertEqual(self.listening["event"], "listening")
        self.assertEqual(self.listening["token_url"], self.base + "/token")
        self.assertTrue(self.base.startswith("http://127.0.0.1:"))

    def test_token_grant_and_errors(self):
        status, body = self.grant()
        self.assertEqual(status, 200)
        self.assertTrue(body["access_token"].startswith("ya29."))
        self.assertEqual((body["expires_in"], body["token_type"]), (60, "Bearer"))
        status, body = self.grant(client_secret="wrong")
        self.assertEqual((status, body["error"]), (401, "invalid_client"))
        status, body = self.grant(refresh_token="rt-other")
        self.assertEqual((status, body["error"]), (400, "invalid_grant"))
        self.call("POST", "/_fake/revoke", {})
        self.assertEqual(self.grant()[1]["error"], "invalid_grant")
        self.call("POST", "/_fake/refresh_token", {"value": "rt-2"})
        self.assertEqual(self.grant("rt-2")[0], 200)
        self.assertEqual(self.state()["token_requests"], 5)

    def test_api_needs_a_valid_token(self):
        status, body, headers = self.call("GET", "/gmail/v1/users/me/profile", token=False)
        self.assertEqual((status, body["error"]["status"]), (401, "UNAUTHENTICATED"))
        self.assertEqual(body["error"]["errors"][0]["reason"], "authError")
        status, body, _ = self.call("GET", "/gmail/v1/users/me/profile")
        self.assertEqual((status, body["emailAddress"]), (200, "support@example.com"))
        self.call("POST", "/_fake/expire_tokens", {})
        self.assertEqual(self.call("GET", "/gmail/v1/users/me/profile")[0], 401)
        # The request log never carries the Authorization header.
        self.assertNotIn(self.token, json.dumps(self.state()))

    def test_deliver_history_paging_and_raw_round_trip(self):
        start = self.call("GET", "/gmail/v1/users/me/profile")[1]["historyId"]
        ids = [self.deliver(n)["id"] for n in range(5)]
        sent = self.call("POST", "/gmail/v1/users/me/messages/send",
                         {"raw": b64url(b"To: ana@example.org\r\nSubject: x\r\n\r\nhi\r\n")})[1]
        seen, token, pages = [], None, 0
        while True:
            query = "startHistoryId=%s&historyTypes=messageAdded&labelId=INBOX" % start
            status, body, _ = self.call("GET", "/gmail/v1/users/me/history?" + query +
                                        ("&pageToken=" + token if token else ""))
            self.assertEqual(status, 200)
            pages += 1
            seen += [a["message"]["id"] for record in body.get("history", []) for a in record["messagesAdded"]]
            token = body.get("nextPageToken")
            if not token:
                break
        self.assertEqual(seen, ids)  # in order, the SENT one filtered out by labelId
        self.assertEqual(pages, 3)
        self.assertNotIn(sent["id"], seen)
        self.assertEqual(int(body["historyId"]), self.state()["history_id"])
        status, got, _ = self.call("GET", "/gmail/v1/users/me/messages/%s?format=raw" % ids[3])
        self.assertEqual(status, 200)
        raw = base64.urlsafe_b64decode(got["raw"] + "=" * (-len(got["raw"]) % 4)).decode()
        self.assertEqual(raw, MAIL.format(n=3))
        self.assertEqual((got["labelIds"], got["snippet"]), (["INBOX", "UNREAD"], "Pedido 3"))
        self.assertEqual(self.call("GET", "/gmail/v1/users/me/messages/ffff?format=raw")[0], 404)
        self.assertEqual(self.call("GET", "/gmail/v1/users/me/messages/%s?format=metadata" % ids[0])[0], 400)

    def test_parts_and_attachments(self):
        pdf = b"%PDF-1.4\n" + bytes(range(256)) * 3
        raw = ("From: ana@example.org\r\nTo: support@example.com\r\nSubject: Factura\r\nMIME-Version: 1.0\r\n"
               "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nAdjunto.\r\n"
               "--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=f.pdf\r\n"
               "Content-Transfer-Encoding: base64\r\n\r\n" + base64.b64encode(pdf).decode() + "\r\n--b--\r\n")
        mid = self.call("POST", "/_fake/deliver", {"raw": raw})[1]["id"]
        status, got, _ = self.call("GET", "/gmail/v1/users/me/messages/%s?format=full" % mid)
        self.assertEqual(status, 200)
        payload = got["payload"]
        self.assertEqual((payload["partId"], payload["mimeType"]), ("", "multipart/mixed"))
        text, attached = payload["parts"]
        self.assertEqual((text["partId"], base64.urlsafe_b64decode(text["body"]["data"])), ("0", b"Adjunto."))
        self.assertEqual((attached["partId"], attached["filename"], attached["body"]["size"]), ("1", "f.pdf", len(pdf)))
        self.assertNotIn("data", attached["body"])
        path = "/gmail/v1/users/me/messages/%s/attachments/%s" % (mid, attached["body"]["attachmentId"])
        status, body, _ = self.call("GET", path)
        self.assertEqual(status, 200)
        self.assertEqual(base64.urlsafe_b64decode(body["data"]), pdf)
        self.assertEqual((body["size"], body["attachmentId"]), (len(pdf), attached["body"]["attachmentId"]))
        self.assertEqual(self.call("GET", path, token=False)[0], 401)
        self.assertEqual(self.call("GET", path + "x")[0], 400)
        # A scripted failure: once 503, then the file.
        self.call("POST", "/_fake/script", {"path": mid + "/attachments/", "status": 503, "retry_after": 1})
        status, _, headers = self.call("GET", path)
        self.assertEqual((status, headers.get("Retry-After")), (503, "1"))
        self.assertEqual(self.call("GET", path)[0], 200)

    def test_stale_history_is_404(self):
        first = self.deliver(1)["historyId"]
        self.deliver(2)
        self.call("POST", "/_fake/forget_history", {"before": "all"})
        status, body, _ = self.call("GET", "/gmail/v1/users/me/history?startHistoryId=" + first)
        self.assertEqual((status, body["error"]["message"]), (404, "Requested entity was not found."))
        current = self.call("GET", "/gmail/v1/users/me/profile")[1]["historyId"]
        status, body, _ = self.call("GET", "/gmail/v1/users/me/history?startHistoryId=" + current)
        self.assertEqual((status, "history" in body), (200, False))

    def test_send_threads_and_rfc822msgid_search(self):
        inbound = self.deliver(7)
        raw = ("From: support@example.com\r\nTo: ana@example.org\r\nSubject: Re: Hola\r\n"
               "Message-ID: <dispatchd.k1@example.com>\r\nIn-Reply-To: <7@example.org>\r\n\r\nok\r\n").encode()
        status, sent, _ = self.call("POST", "/gmail/v1/users/me/messages/send",
                                    {"raw": b64url(raw), "threadId": inbound["threadId"]})
        self.assertEqual((status, sent["threadId"], sent["labelIds"]), (200, inbound["threadId"], ["SENT"]))
        for q in ("rfc822msgid:dispatchd.k1@example.com in:sent", "in:anywhere rfc822msgid:<dispatchd.k1@example.com>"):
            body = self.call("GET", "/gmail/v1/users/me/messages?q=" + urllib.parse.quote(q))[1]
            self.assertEqual([m["id"] for m in body["messages"]], [sent["id"]], q)
        body = self.call("GET", "/gmail/v1/users/me/messages?q=" + urllib.parse.quote("rfc822msgid:nope@x in:sent"))[1]
        self.assertEqual((body["resultSizeEstimate"], "messages" in body), (0, False))
        status, body, _ = self.call("GET", "/gmail/v1/users/me/messages?q=" + urllib.parse.quote("from:ana"))
        self.assertEqual((status, body["error"]["status"]), (400, "INVALID_ARGUMENT"))
        self.assertEqual(self.state()["sent"][0]["raw"], raw.decode())
        # A customer's answer to our reply lands in the same thread.
        answer = self.deliver(8, raw="From: ana@example.org\r\nReferences: <dispatchd.k1@example.com>\r\n\r\nx\r\n")
        self.assertEqual(answer["threadId"], inbound["threadId"])

    def test_messages_list_after_newest_first_paged(self):
        now = int(time.time())
        for n, age in enumerate((500, 300, 100, 50)):
            self.deliver(n, internalDate=(now - age) * 1000)
        ids, token = [], ""
        while True:
            body = self.call("GET", "/gmail/v1/users/me/messages?q=after:%d&labelIds=INBOX%s" %
                             (now - 400, "&pageToken=" + token if token else ""))[1]
            ids += [m["id"] for m in body.get("messages", [])]
            token = body.get("nextPageToken")
            if not token:
                break
        messages = {m["message_id"]: m["id"] for m in self.state()["messages"]}
        self.assertEqual(ids, [messages["3@example.org"], messages["2@example.org"], messages["1@example.org"]])

    def test_script_429_with_retry_after(self):
        self.call("POST", "/_fake/script", {"path": "/history", "status": 429, "retry_after": 7, "reason": "rateLimitExceeded"})
        status, body, headers = self.call("GET", "/gmail/v1/users/me/history?startHistoryId=1")
        self.assertEqual((status, headers["Retry-After"]), (429, "7"))
        self.assertEqual(body["error"]["errors"][0]["reason"], "rateLimitExceeded")
        self.assertEqual(self.call("GET", "/gmail/v1/users/me/history?startHistoryId=1")[0], 200)

    def test_script_commit_before_delay_stores_the_lost_send(self):
        self.call("POST", "/_fake/script", {"path": "/messages/send", "delay_ms": 800, "commit_before_delay": True})
        raw = b"To: ana@example.org\r\nMessage-ID: <lost@example.com>\r\n\r\nx\r\n"
        with self.assertRaises(OSError):  # urllib's timeout: the client never sees the answer
            self.call("POST", "/gmail/v1/users/me/messages/send", {"raw": b64url(raw)}, timeout=0.3)
        body = self.call("GET", "/gmail/v1/users/me/messages?q=rfc822msgid:lost@example.com")[1]
        self.assertEqual(len(body["messages"]), 1)

    def test_labels_and_modify(self):
        labels = self.call("GET", "/gmail/v1/users/me/labels")[1]["labels"]
        self.assertIn({"id": "INBOX", "name": "INBOX", "type": "system"}, labels)
        status, label, _ = self.call("POST", "/gmail/v1/users/me/labels", {"name": "dispatchd/handled"})
        self.assertEqual((status, label["id"]), (200, "Label_1"))
        self.assertEqual(self.call("POST", "/gmail/v1/users/me/labels", {"name": "dispatchd/handled"})[0], 409)
        message = self.deliver(1)
        status, body, _ = self.call("POST", "/gmail/v1/users/me/messages/%s/modify" % message["id"],
                                    {"addLabelIds": ["Label_1"], "removeLabelIds": ["UNREAD"]})
        self.assertEqual((status, body["labelIds"]), (200, ["INBOX", "Label_1"]))
        self.assertEqual(self.state()["modified"][0]["addLabelIds"], ["Label_1"])
        self.assertEqual(self.call("POST", "/gmail/v1/users/me/messages/%s/modify" % message["id"],
                                   {"addLabelIds": ["Label_9"]})[0], 400)


if __name__ == "__main__":
    unittest.main()
