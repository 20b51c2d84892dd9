#!/usr/bin/env python3
"""Black-box test of the standalone fake_graph: it prints its port, answers a scripted
error and then a sent message, logs both as JSON lines, and exits 0 on SIGTERM; with
--timeline it writes one line per request at exit, stamped on the clock Python's
time.monotonic_ns() reads.

usage: fake_graph_main_test.py FAKE_GRAPH"""

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

BODY = {"messaging_product": "whatsapp", "recipient_type": "individual", "to": "5215512345678",
        "type": "text", "text": {"preview_url": False, "body": "Hola, s\u00ed"}}


def post(base_url, token):
    request = urllib.request.Request(base_url + "/109876543210001/messages", data=json.dumps(BODY).encode(),
                                     headers={"Authorization": "Bearer " + token,
                                              "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def main():
    folder = tempfile.TemporaryDirectory(prefix="fake-graph-test-")
    timeline = os.path.join(folder.name, "timeline.txt")
    server = subprocess.Popen([sys.argv[1], "--token", "demo-token", "--script", "131047", "--timeline", timeline],
                              stdout=subprocess.PIPE, text=True)
    try:
        listening = json.loads(server.stdout.readline())
        assert listening["event"] == "listening" and listening["port"] > 0, listening
        before = time.monotonic_ns()
        status, body = post(listening["base_url"], "demo-token")
        assert status == 400 and body["error"]["code"] == 131047, (status, body)
        status, body = post(listening["base_url"], "demo-token")
        assert status == 200 and body["messages"][0]["id"].startswith("wamid."), (status, body)
        status, body = post(listening["base_url"], "wrong-token")
        assert status == 401 and body["error"]["code"] == 190, (status, body)
        after = time.monotonic_ns()
    finally:
        server.terminate()
    out, _ = server.communicate(timeout=10)
    assert server.returncode == 0, server.returncode
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["answered"] for line in lines] == [400, 200, 401], lines
    assert lines[1]["text"] == "Hola, s\u00ed" and lines[1]["wamid"].startswith("wamid."), lines
    # Every text send, whatever it was answered, keyed by its recipient, in order, within the
    # test's own readings of CLOCK_MONOTONIC.
    with open(timeline) as f:
        events = [line.split() for line in f]
    assert [e[1:] for e in events] == [["graph_send", "5215512345678"]] * 3, events
    stamps = [int(e[0]) for e in events]
    assert before <= stamps[0] <= stamps[1] <= stamps[2] <= after, (before, stamps, after)
    folder.cleanup()
    print("fake_graph: ok")


if __name__ == "__main__":
    main()
