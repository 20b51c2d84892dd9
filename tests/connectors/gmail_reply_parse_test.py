#!/usr/bin/env python3
"""A standard parser reads our reply as we meant it: runs gmail_reply_sample (the spec is
fixed in tests/fakes/gmail_reply_sample_main.cpp) and parses its output with Python's email
package, policy=default, which decodes RFC 2047 words and the transfer encoding itself.

usage: gmail_reply_parse_test.py GMAIL_REPLY_SAMPLE"""

import email
import email.policy
import subprocess
import sys


def main():
    raw = subprocess.run([sys.argv[1]], check=True, capture_output=True, timeout=30).stdout
    assert b"\n" not in raw.replace(b"\r\n", b""), "a line ending other than CRLF"
    assert all(byte < 0x80 for byte in raw), "8-bit bytes: the message must be 7-bit clean"
    message = email.message_from_bytes(raw, policy=email.policy.default)
    assert not message.defects, message.defects
    checks = {
        "From": 'Soporte Ñandú <support@example.com>',
        "To": '"José \\"Pepe\\" Pérez" <jose.perez@example.org>',
        "Subject": "Re: ¿Dónde está mi pedido nº 42?",
        "Message-ID": "<dispatchd.outbox-2F42-231@example.com>",
        "In-Reply-To": "<CAF=orig-42@mail.example.org>",
        "References": "<root-1@mail.example.org> <CAF=mid-2@mail.example.org> <CAF=orig-42@mail.example.org>",
        "Auto-Submitted": "auto-replied",
        "Date": "Mon, 01 Dec 2025 14:40:00 +0000",
        "MIME-Version": "1.0",
    }
    for name, expected in checks.items():
        value = " ".join(str(message[name]).split())  # unfolded: a fold may leave a tab
        assert value == expected, (name, value, expected)
    assert message["To"].addresses[0].display_name == 'José "Pepe" Pérez', message["To"].addresses
    assert message.get_content_type() == "text/plain" and message.get_content_charset() == "utf-8"
    body = message.get_body(("plain",)).get_content()
    expected_body = ("Hola José,\n\nsu pedido nº 42 salió ayer — llega el jueves.\n"
                     "ご注文ありがとうございます。\n\nSoporte\n")
    assert body.replace("\r\n", "\n") == expected_body, repr(body)
    print("gmail reply: parsed by Python's email package as built")


if __name__ == "__main__":
    main()
