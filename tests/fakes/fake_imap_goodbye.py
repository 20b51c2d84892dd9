#!/usr/bin/env python3
"""An IMAP server over implicit TLS that says goodbye on cue, for the client's reconnect rule.

    fake_imap_goodbye.py CERT KEY LOG STEP...

Listens on 127.0.0.1 (a free port, printed on the first line of stdout) and answers LOGIN
and CAPABILITY with OK, and each EXAMINE, in order, as the next STEP says:
  ok       a mailbox (3 messages, UIDVALIDITY 7, UIDNEXT 4) and a tagged OK
  bye      only "* BYE Server shutting down." and the connection closed: what a shutdown
           racing the command looks like (the server said it before it read the command)
  late-bye "* 3 EXISTS" and then the BYE and the close: the server had begun to answer
Writes "connection N" and "examine N STEP" lines to LOG. Exits when every step is used
and its connection closed, or when no client comes for 20 s.
"""
import socket
import ssl
import sys


def serve(conn, steps, log, examined):
    reader = conn.makefile("rb")
    conn.sendall(b"* OK [CAPABILITY IMAP4rev1 LITERAL+] fake ready\r\n")
    while True:
        line = reader.readline()
        if not line:
            return
        parts = line.decode("utf-8", "replace").rstrip("\r\n").split(" ", 2)
        tag, verb = parts[0], parts[1].upper() if len(parts) > 1 else ""
        if verb == "CAPABILITY":
            conn.sendall(b"* CAPABILITY IMAP4rev1 LITERAL+\r\n" + tag.encode() + b" OK done\r\n")
        elif verb == "EXAMINE" and steps:
            step = steps.pop(0)
            examined.append(step)
            log.write(f"examine {len(examined)} {step}\n")
            log.flush()
            if step == "ok":
                conn.sendall(b"* FLAGS (\\Seen)\r\n* 3 EXISTS\r\n* OK [UIDVALIDITY 7] ok\r\n"
                             b"* OK [UIDNEXT 4] ok\r\n" + tag.encode() + b" OK [READ-ONLY] done\r\n")
            else:
                if step == "late-bye":
                    conn.sendall(b"* 3 EXISTS\r\n")
                conn.sendall(b"* BYE Server shutting down.\r\n")
                return
        elif verb == "LOGOUT":
            conn.sendall(b"* BYE bye\r\n" + tag.encode() + b" OK done\r\n")
            return
        else:
            conn.sendall(tag.encode() + b" OK done\r\n")


def main():
    cert, key, log_path, steps = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(20)
    print(listener.getsockname()[1], flush=True)
    connections = 0
    examined = []
    with open(log_path, "w") as log:
        while steps:
            try:
                raw, _ = listener.accept()
            except socket.timeout:
                return
            connections += 1
            log.write(f"connection {connections}\n")
            log.flush()
            raw.settimeout(20)
            try:
                with context.wrap_socket(raw, server_side=True) as conn:
                    serve(conn, steps, log, examined)
            except (OSError, ssl.SSLError):
                pass


if __name__ == "__main__":
    main()
