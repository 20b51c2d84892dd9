#!/usr/bin/env python3
"""fake_smtp: a scripted SMTP submission server on 127.0.0.1 with implicit TLS, for the ways
a real server fails that Postfix cannot be made to fail on cue (tests/mail/imap_clients_test.py).
Python 3 standard library only.

  fake_smtp.py CERT KEY [--file-sent PORT USER PASSWORD CA_FILE]
    CERT KEY      the server's certificate chain and key (PEM)
    --file-sent   files each message it takes in USER's "Sent" over IMAPS on 127.0.0.1:PORT,
                  as Gmail and Microsoft 365 do (the IMAP channel's contract test)

stdout: one JSON line, {"event":"listening","port":N}, then one line per event:
{"event":"received"} when a send reaches it (MAIL FROM; not in drop-at-mail), {"event":"held"}
when it holds an answer, {"event":"delivered"} when it takes a message (the whole data read, in
the modes that take it: ok, drop-after-data, silent-after-data, hold).
Runs until SIGTERM or stdin closes. Lines on stdin script it (the contract test's harness):
  next MODE       the next MAIL transaction is in MODE, whatever its address says
  release         answers every held message 250
  auth refuse     AUTH is answered 535 from now on; auth ok: as usual again
  kick            closes every open connection (the next send connects again)

What it does is chosen by the client, so that one server serves every case:
  AUTH (PLAIN or LOGIN) as "refused@..." : 535 5.7.8; as "later@...": 454 4.7.0; else 235.
  AUTH XOAUTH2 with the token "good-token": 235; any other token: 334 with Google's error
  JSON, then 535 5.7.8 (as Gmail answers).
  MAIL FROM:<mode@...>, mode:
    ok                 250 after the data ("250 2.0.0 Ok: queued as FAKE1")
    refuse-rcpt        RCPT answered 550 5.1.1
    later-rcpt         RCPT answered 450 4.2.0
    refuse-data        DATA answered 554 5.5.1 (no 354)
    drop-in-data       354, then the connection closed (RST) before reading the message
    drop-after-data    354, the whole message read (up to the final "."), then closed: no reply
    silent-after-data  the same, then nothing: the connection stays open, unanswered
    later-after-data   451 4.3.0 after the data
    reject-after-data  554 5.7.1 after the data
    drop-at-mail       the connection closed at MAIL, unanswered: nothing reached it
    hold               250 after the data once `release` comes on stdin
  Anything else is "ok".
"""

import base64
import imaplib
import json
import socket
import ssl
import struct
import sys
import threading


lock = threading.Lock()
state = {"next": [], "auth_refused": False, "conns": set(), "file_sent": None}
released = threading.Condition(lock)
release_count = [0]


def event(name):
    with lock:
        print(json.dumps({"event": name}), flush=True)


def file_sent(raw):
    if not state["file_sent"]:
        return
    port, user, password, ca_file = state["file_sent"]
    context = ssl.create_default_context(cafile=ca_file)
    with imaplib.IMAP4_SSL("127.0.0.1", int(port), ssl_context=context, timeout=15) as conn:
        conn.login(user, password)
        conn.append("Sent", "(\\Seen)", None, raw)


def reply(conn, line):
    conn.sendall(line.encode() + b"\r\n")


def read_line(f):
    line = f.readline(65536)
    if not line:
        raise EOFError
    return line.rstrip(b"\r\n").decode("latin-1")


def auth_user(f, conn, words):
    """The user of an AUTH exchange; None when the client gave up."""
    mechanism = words[1].upper() if len(words) > 1 else ""
    if mechanism == "PLAIN":
        if len(words) > 2:
            token = words[2]
        else:
            reply(conn, "334 ")
            token = read_line(f)
        parts = base64.b64decode(token + "==").split(b"\0")
        return parts[1].decode() if len(parts) >= 3 else ""
    if mechanism == "LOGIN":
        if len(words) > 2:
            user = base64.b64decode(words[2]).decode()
        else:
            reply(conn, "334 VXNlcm5hbWU6")
            user = base64.b64decode(read_line(f)).decode()
        reply(conn, "334 UGFzc3dvcmQ6")
        read_line(f)
        return user
    if mechanism == "XOAUTH2":
        response = words[2] if len(words) > 2 else None
        if response is None:
            reply(conn, "334 ")
            response = read_line(f)
        fields = base64.b64decode(response + "==").split(b"\x01")
        user = fields[0].decode().removeprefix("user=")
        if b"auth=Bearer good-token" in fields:
            return user
        reply(conn, "334 " + base64.b64encode(b'{"status":"401","schemes":"bearer"}').decode())
        read_line(f)  # the client's empty answer
        return "refused@" + user
    reply(conn, "504 5.5.4 mechanism not supported")
    return None


MODES = ("ok", "refuse-rcpt", "later-rcpt", "refuse-data", "drop-in-data", "drop-after-data", "silent-after-data",
         "later-after-data", "reject-after-data", "drop-at-mail", "hold")


def serve(conn):
    with lock:
        state["conns"].add(conn)
    f = conn.makefile("rb")
    mode = "ok"
    try:
        reply(conn, "220 fake.example.test ESMTP fake_smtp")
        while True:
            line = read_line(f)
            words = line.split(" ")
            verb = words[0].upper()
            if verb in ("EHLO", "HELO"):
                conn.sendall(b"250-fake.example.test\r\n250-AUTH PLAIN LOGIN XOAUTH2\r\n250 8BITMIME\r\n")
            elif verb == "AUTH":
                user = auth_user(f, conn, words)
                if user is None:
                    continue
                if user.startswith("refused@") or state["auth_refused"]:
                    reply(conn, "535 5.7.8 Error: authentication failed")
                elif user.startswith("later@"):
                    reply(conn, "454 4.7.0 Temporary authentication failure")
                else:
                    reply(conn, "235 2.7.0 Authentication successful")
            elif verb == "MAIL":
                address = line[line.find("<") + 1:line.find(">")]
                mode = address.split("@")[0]
                with lock:
                    if state["next"]:
                        mode = state["next"].pop(0)
                if mode == "drop-at-mail":
                    return
                event("received")
                reply(conn, "250 2.1.0 Ok")
            elif verb == "RCPT":
                if mode == "refuse-rcpt":
                    reply(conn, "550 5.1.1 <nobody@example.test>: Recipient address rejected")
                elif mode == "later-rcpt":
                    reply(conn, "450 4.2.0 <nobody@example.test>: Recipient address rejected: try later")
                else:
                    reply(conn, "250 2.1.5 Ok")
            elif verb == "DATA":
                if mode == "refuse-data":
                    reply(conn, "554 5.5.1 Error: no valid recipients")
                    continue
                reply(conn, "354 End data with <CR><LF>.<CR><LF>")
                if mode == "drop-in-data":
                    # Closed with the message unread: the kernel answers what comes with RST.
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    conn.close()
                    return
                data = []
                while (text := read_line(f)) != ".":
                    data.append(text[1:] if text.startswith(".") else text)
                if mode in ("ok", "drop-after-data", "silent-after-data", "hold") or mode not in MODES:
                    file_sent(("\r\n".join(data) + "\r\n").encode("latin-1"))
                    event("delivered")
                if mode == "hold":
                    with lock:
                        seen = release_count[0]
                        print(json.dumps({"event": "held"}), flush=True)
                        released.wait_for(lambda: release_count[0] > seen)
                if mode == "drop-after-data":
                    return
                if mode == "silent-after-data":
                    while f.readline(65536):
                        pass
                    return
                if mode == "later-after-data":
                    reply(conn, "451 4.3.0 Error: queue file write error")
                elif mode == "reject-after-data":
                    reply(conn, "554 5.7.1 Rejected: content")
                else:
                    reply(conn, "250 2.0.0 Ok: queued as FAKE1")
            elif verb == "RSET" or verb == "NOOP":
                reply(conn, "250 2.0.0 Ok")
            elif verb == "QUIT":
                reply(conn, "221 2.0.0 Bye")
                return
            else:
                reply(conn, "502 5.5.2 Error: command not recognized")
    except (EOFError, OSError, ValueError):
        return
    finally:
        with lock:
            state["conns"].discard(conn)
        try:
            conn.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        conn.close()


def main():
    cert, key = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 3 and sys.argv[3] == "--file-sent":
        state["file_sent"] = sys.argv[4:8]
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    event_line = json.dumps({"event": "listening", "port": listener.getsockname()[1]})
    with lock:
        print(event_line, flush=True)

    def accept():
        while True:
            raw, _ = listener.accept()
            try:
                conn = context.wrap_socket(raw, server_side=True)
            except (ssl.SSLError, OSError):
                raw.close()
                continue
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    for line in sys.stdin:  # until the test closes our stdin (or kills us)
        words = line.split()
        with lock:
            if words[:1] == ["next"] and len(words) == 2:
                state["next"].append(words[1])
            elif words == ["release"]:
                release_count[0] += 1
                released.notify_all()
            elif words[:1] == ["auth"] and len(words) == 2:
                state["auth_refused"] = words[1] == "refuse"
            elif words == ["kick"]:
                for conn in list(state["conns"]):
                    try:
                        conn.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass


if __name__ == "__main__":
    main()
