#!/usr/bin/env python3
"""Writes the mail corpus: NAME.eml (real bytes, CRLF line ends) and NAME.expected.json.

Run from anywhere: python3 tests/data/mail/generate.py. The files are checked in; this script
is how they were made, so that a change to one message is a change to one entry here. The
non-UTF-8 messages hold the real bytes of their charset (str.encode), and the expected text is
the UTF-8 that was encoded. The 10 MB attachment, the deep nesting and the many parts are made
at run time by tests/connectors/email_decode_test.cpp, not here.

Expected keys (all optional except as noted): subject, from, reply_to, to, cc, date,
message_id, in_reply_to, references, text (exact) or text_contains / text_not_contains
(lists), full_text_contains, attachments ([{name,type,size}], exact), flags (exact, all five),
defects_nonempty (bool), defects_contain (list of phrases), own (the own address to pass),
counterpart, error ("not_a_message"), undecodable (bool: decode fails, or empty text with
defects: what the connector escalates).
"""
import base64
import json
import os
import quopri
import random

HERE = os.path.dirname(os.path.abspath(__file__))
NO_FLAGS = {"auto_reply": False, "list": False, "bounce": False, "own": False, "no_reply": False}
CORPUS = []


def flags(**kw):
    out = dict(NO_FLAGS)
    out.update(kw)
    return out


def crlf(data: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def b64(data: bytes) -> bytes:
    return base64.encodebytes(data)


def qp(data: bytes) -> bytes:
    return quopri.encodestring(data)


def add(name, raw, expected):
    if isinstance(raw, str):
        raw = raw.encode("utf-8")
    CORPUS.append((name, raw, expected))


def headers(subject="Hello", frm="=?utf-8?Q?Ana_P=C3=A9rez?= <ana@example.com>", extra=""):
    h = (f"From: {frm}\nTo: Support <support@dispatch.example>\nSubject: {subject}\n"
         "Date: Mon, 30 Nov 2026 12:00:00 +0000\nMessage-ID: <m1@example.com>\nMIME-Version: 1.0\n")
    return h + extra


ANA = {"name": "Ana Pérez", "address": "ana@example.com"}


def simple(name, body_text, charset, encoding="8bit", subject="Hello", expected_text=None, extra_expected=None,
           frm="=?utf-8?Q?Ana_P=C3=A9rez?= <ana@example.com>", from_expected=ANA, extra_headers="", codec=None):
    data = body_text.encode(codec or charset.replace("-", "_"))
    if encoding == "base64":
        body = b64(data)
    elif encoding == "quoted-printable":
        body = qp(data)
    else:
        body = data
    head = headers(subject, frm, extra_headers) + (f"Content-Type: text/plain; charset={charset}\n"
                                                     f"Content-Transfer-Encoding: {encoding}\n\n")
    expected = {"subject": subject, "from": from_expected,
                "text": expected_text if expected_text is not None else body_text.strip(), "flags": flags(),
                "defects_nonempty": False}
    expected.update(extra_expected or {})
    add(name, crlf(head.encode("ascii") + body), expected)


# ---- charsets -------------------------------------------------------------------------------
simple("charset_utf8", "Hola 👋, ¿dónde está mi pedido nº 1234? Gracias — Ana\n", "utf-8")
simple("charset_iso8859_1_qp", "Olá! Não consigo aceder à minha conta.\nObrigado, Ana\n", "iso-8859-1",
       "quoted-printable")
simple("charset_iso8859_2", "Dzień dobry, zamówienie nr 123 nie dotarło.\nPozdrawiam, Łukasz\n", "iso-8859-2")
simple("charset_iso8859_15_b64", "Le prix est de 50 € par mois. Cœur sur vous.\n", "iso-8859-15", "base64")
simple("charset_windows1251", "Здравствуйте! Где мой заказ? Спасибо.\n", "windows-1251", "base64")
simple("charset_windows1252", "Smart “quotes” and the € sign – thanks…\n", "windows-1252", "quoted-printable")
simple("charset_koi8r", "Привет! Когда будет доставка?\n", "koi8-r")
simple("charset_iso2022jp", "お世話になっております。注文の件でご連絡しました。\n", "iso-2022-jp", "7bit",
       subject="=?ISO-2022-JP?B?" + base64.b64encode("注文".encode("iso2022_jp")).decode() + "?=", extra_expected={"subject": "注文"})
simple("charset_shift_jis", "注文番号は１２３です。よろしくお願いします。\n", "shift_jis", "base64")
simple("charset_gb2312", "您好，我的订单还没有到。谢谢！\n", "gb2312", "base64")
simple("charset_gbk", "您好，我是王喆，订单还没有到。\n", "gbk", "base64")
simple("charset_big5", "您好，我的訂單還沒有到。謝謝！\n", "big5", "base64")
simple("charset_euc_kr", "안녕하세요. 주문이 아직 도착하지 않았습니다.\n", "euc-kr", "base64")
simple("charset_unknown", "Plain words, café.\n", "x-foo", codec="utf-8", extra_expected={
    "defects_contain": ["unknown charset x-foo"], "defects_nonempty": True})
add("charset_utf8_invalid_bytes", crlf(headers().encode() + b"Content-Type: text/plain; charset=utf-8\n\n"
                                       b"caf\xe9 ol\xe9\n"),
    {"subject": "Hello", "from": ANA, "text": "caf\ufffd ol\ufffd", "flags": flags(), "defects_nonempty": True})
add("charset_undeclared_8bit", crlf(headers().encode() + b"Content-Type: text/plain\n\n" + "Ça va très bien.\n".encode(
    "latin-1")), {"subject": "Hello", "from": ANA, "text": "Ça va très bien.", "flags": flags()})

# ---- transfer encodings -----------------------------------------------------------------------
LONG = ("This is a long line of text that a mail client wraps with soft line breaks in quoted-printable, "
        "and the decoder must join it again: naïve café façade.")
simple("qp_soft_breaks", LONG + "\n", "utf-8", "quoted-printable")
simple("base64_utf8", "Línea uno.\nLínea dos con ñ.\n", "utf-8", "base64")

# ---- structure -------------------------------------------------------------------------------
PDF = b"%PDF-1.4\n" + bytes(range(256)) * 4
PNG = b"\x89PNG\r\n\x1a\n" + bytes(200)
nested = headers("Nested", extra="Content-Type: multipart/mixed; boundary=\"outer\"\n\n") + f"""This is a multi-part message in MIME format.

--outer
Content-Type: multipart/alternative; boundary="alt"

--alt
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: quoted-printable

{qp("Please find the invoice attached. Regards, Ana".encode()).decode()}
--alt
Content-Type: multipart/related; boundary="rel"

--rel
Content-Type: text/html; charset=utf-8

<html><body><p>Please find the <b>invoice</b> attached.</p><img src="cid:logo"></body></html>
--rel
Content-Type: image/png
Content-ID: <logo>
Content-Transfer-Encoding: base64

{b64(PNG).decode()}--rel--
--alt--
--outer
Content-Type: application/pdf; name="invoice.pdf"
Content-Disposition: attachment; filename="invoice.pdf"
Content-Transfer-Encoding: base64

{b64(PDF).decode()}--outer--
"""
add("nested_mixed_alternative_related", crlf(nested.encode()), {
    "subject": "Nested", "from": ANA, "text": "Please find the invoice attached. Regards, Ana", "flags": flags(),
    "attachments": [{"name": "invoice.pdf", "type": "application/pdf", "size": len(PDF)}], "defects_nonempty": False})

HTML = """<!DOCTYPE html><html><head><title>Order</title><style>p { color: red }</style>
<script>alert('x')</script></head><body><div>Hello   team,</div><p>My order &amp; invoice:
caf&eacute;&nbsp;au&nbsp;lait</p><ul><li>item one</li><li>item two</li></ul>Line<br>break
<table><tr><td>Total</td><td>12 &euro;</td></tr></table></body></html>"""
add("html_only", crlf((headers("HTML only") + "Content-Type: text/html; charset=utf-8\n\n" + HTML).encode()), {
    "subject": "HTML only", "from": ANA, "flags": flags(), "defects_nonempty": False,
    "text": "Hello team,\n\nMy order & invoice: café\u00a0au\u00a0lait\n\n- item one\n- item two\n\nLine\nbreak\n\n"
            "Total 12 €"})
GMAIL_HTML = """<div dir="ltr">Thanks, that works for me.</div><br><div class="gmail_quote"><div dir="ltr"
class="gmail_attr">On Mon, 30 Nov 2026 at 10:00, Support &lt;support@dispatch.example&gt; wrote:<br></div>
<blockquote class="gmail_quote" style="margin:0px">Would Tuesday suit you?</blockquote></div>"""
add("html_gmail_quote", crlf((headers("Re: Booking", extra="In-Reply-To: <s1@dispatch.example>\n") +
                              "Content-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\n"
                              + qp(GMAIL_HTML.encode()).decode()).encode()), {
    "subject": "Re: Booking", "from": ANA, "flags": flags(), "text": "Thanks, that works for me.",
    "full_text_contains": ["Would Tuesday suit you?"], "in_reply_to": "s1@dispatch.example"})

# ---- headers ---------------------------------------------------------------------------------
add("encoded_headers", crlf(b"""From: =?UTF-8?B?Sm9zw6kgR2FyY8OtYQ==?= <jose@example.es>
To: =?iso-8859-1?Q?Andr=E9?= <andre@example.fr>, plain@example.com
Cc: Team: a@example.com, b@example.com;
Subject: =?iso-8859-1?Q?R=E9ponse_=E0?= =?utf-8?B?ZnJhbsOnYWlz?= and =?koi8-r?B?8NLJ18XU?=
Date: Tue, 1 Dec 2026 09:30:00 +0100
Message-ID: <abc@example.es>
In-Reply-To: <parent@example.com>
References: <root@example.com> <parent@example.com>
MIME-Version: 1.0
Content-Type: text/plain; charset=utf-8

Body.
"""), {"subject": "Réponse àfrançais and Привет", "from": {"name": "José García", "address": "jose@example.es"},
       "to": [{"name": "André", "address": "andre@example.fr"}, {"name": "", "address": "plain@example.com"}],
       "cc": [{"name": "", "address": "a@example.com"}, {"name": "", "address": "b@example.com"}],
       "date": "2026-12-01T08:30:00Z", "message_id": "abc@example.es", "in_reply_to": "parent@example.com",
       "references": ["root@example.com", "parent@example.com"], "text": "Body.", "flags": flags()})
add("malformed_encoded_words", crlf(b"""From: =?utf-8?Q?Mar=C3=ADa?=<maria@example.com>
To: support@dispatch.example
Subject: =?utf-8?Q?Caf=C3=A9 con leche?= =?uft-8?B?dGVzdGluZw?= =?utf-8?B?w7FhbmRV?=
Date: Mon, 30 Nov 2026 12:00:00 +0000
Content-Type: text/plain; charset=utf-8

Texto.
"""), {"subject": "Café con lechetestingñandU", "from": {"name": "María", "address": "maria@example.com"},
       "text": "Texto.", "flags": flags()})
add("raw_8bit_headers_utf8", crlf("""From: Zoë Ünal <zoe@example.de>
To: support@dispatch.example
Subject: Größe ändern, bitte
Date: Mon, 30 Nov 2026 12:00:00 +0000
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: 8bit

Grüße aus München.
""".encode()), {"subject": "Größe ändern, bitte", "from": {"name": "Zoë Ünal", "address": "zoe@example.de"},
                 "text": "Grüße aus München.", "flags": flags()})
add("raw_8bit_headers_latin1", crlf("""From: Zoë <zoe@example.de>
To: support@dispatch.example
Subject: Größe
Date: Mon, 30 Nov 2026 12:00:00 +0000
Content-Type: text/plain; charset=iso-8859-1

Grüße.
""".encode("latin-1")), {"subject": "Größe", "from": {"name": "Zoë", "address": "zoe@example.de"},
                         "text": "Grüße.", "flags": flags()})
add("reply_to_and_bad_date", crlf(b"""From: Shop Robot <orders@shop.example>
Reply-To: Customer Care <Care@Shop.Example>
To: support@dispatch.example
Subject: Question
Date: sometime last week
Content-Type: text/plain

Is this still open?
"""), {"subject": "Question", "from": {"name": "Shop Robot", "address": "orders@shop.example"},
       "reply_to": {"name": "Customer Care", "address": "Care@Shop.Example"}, "counterpart": "care@shop.example",
       "date": None, "text": "Is this still open?", "flags": flags(), "defects_contain": ["unparseable date"]})

# ---- attachments -------------------------------------------------------------------------------
RATES = b"rate,value\n1,2\n"
add("rfc2231_filenames", crlf((headers("Files", extra="Content-Type: multipart/mixed; boundary=b1\n\n") + f"""--b1
Content-Type: text/plain; charset=utf-8

Two files.
--b1
Content-Type: text/csv
Content-Disposition: attachment; filename*=UTF-8''%E2%82%AC%20rates.csv
Content-Transfer-Encoding: base64

{b64(RATES).decode()}--b1
Content-Type: application/octet-stream
Content-Disposition: attachment;
 filename*0*=iso-8859-1''r%E9sum%E9%20;
 filename*1="of the long name.bin"

{"x" * 10}
--b1
Content-Type: image/jpeg; name="=?utf-8?B?Zm90b8K3MS5qcGc=?="
Content-Transfer-Encoding: base64

{b64(b"JPEGDATA").decode()}--b1--
""").encode()), {"subject": "Files", "from": ANA, "text": "Two files.", "flags": flags(), "attachments": [
    {"name": "€ rates.csv", "type": "text/csv", "size": len(RATES)},
    {"name": "résumé of the long name.bin", "type": "application/octet-stream", "size": 10},
    {"name": "foto·1.jpg", "type": "image/jpeg", "size": 8}]})

# ---- broken structure --------------------------------------------------------------------------
add("bad_boundary", crlf((headers("Broken", extra="Content-Type: multipart/mixed; boundary=\"right\"\n\n") +
                          "--wrong\nContent-Type: text/plain\n\nThe text is still here.\n--wrong--\n").encode()), {
    "subject": "Broken", "from": ANA, "text_contains": ["The text is still here."], "flags": flags(),
    "defects_nonempty": True})
add("missing_boundary_parameter", crlf((headers("No boundary", extra="Content-Type: multipart/mixed\n\n") +
                                        "--x\nContent-Type: text/plain\n\nStill readable.\n--x--\n").encode()), {
    "subject": "No boundary", "from": ANA, "text_contains": ["Still readable."], "flags": flags(),
    "defects_nonempty": True})
add("missing_final_boundary", crlf((headers("Cut", extra="Content-Type: multipart/mixed; boundary=zz\n\n") +
                                    "--zz\nContent-Type: text/plain\n\nFirst part.\n--zz\nContent-Type: "
                                    "application/pdf; name=a.pdf\nContent-Transfer-Encoding: base64\n\n"
                                    "JVBERi0xLjQK\n").encode()), {
    "subject": "Cut", "from": ANA, "text": "First part.", "flags": flags(),
    "attachments": [{"name": "a.pdf", "type": "application/pdf", "size": 9}]})
add("attachment_only", crlf((headers("Scan", extra="Content-Type: application/pdf; name=scan.pdf\n"
                                                   "Content-Transfer-Encoding: base64\n\n") + "JVBERi0xLjQK\n").encode()), {
    "subject": "Scan", "from": ANA, "text": "", "flags": flags(), "undecodable": True,
    "attachments": [{"name": "scan.pdf", "type": "application/pdf", "size": 9}], "defects_contain": ["no text part"]})
add("encrypted_pgp", crlf((headers("Secret", extra="Content-Type: multipart/encrypted; "
                                   "protocol=\"application/pgp-encrypted\"; boundary=e\n\n") + """--e
Content-Type: application/pgp-encrypted

Version: 1
--e
Content-Type: application/octet-stream

-----BEGIN PGP MESSAGE-----
hQEMA0x
-----END PGP MESSAGE-----
--e--
""").encode()), {"subject": "Secret", "from": ANA, "text": "", "flags": flags(), "undecodable": True,
                 "defects_contain": ["encrypted message", "no text part"]})
add("headers_only", crlf(headers("Nothing").encode() + b"\n"), {"subject": "Nothing", "from": ANA, "text": "",
                                                         "flags": flags(), "undecodable": False})
add("empty", b"", {"error": "not_a_message", "undecodable": True})
rng = random.Random(12)
add("binary_garbage", bytes(rng.randrange(256) for _ in range(4096)), {"undecodable": True})

# ---- forwards and reports ----------------------------------------------------------------------
INNER = """From: Bob <bob@example.org>
To: ana@example.com
Subject: Original question
Date: Sun, 29 Nov 2026 08:00:00 +0000
Content-Type: text/plain; charset=utf-8

Can you check my order 77?
"""
add("forward_rfc822", crlf((headers("Fwd: Original question", extra="Content-Type: multipart/mixed; boundary=f\n\n") +
                            "--f\nContent-Type: text/plain\n\nFYI, see below.\n--f\nContent-Type: message/rfc822\n\n"
                            + INNER + "--f--\n").encode()), {
    "subject": "Fwd: Original question", "from": ANA, "text": "FYI, see below.", "flags": flags(),
    "attachments": [{"name": "Original question", "type": "message/rfc822", "size": len(crlf(INNER.encode())) - 2}]})  # the CRLF before a boundary is the boundary's
add("forward_rfc822_only", crlf((headers("Fwd: Original question", extra="Content-Type: message/rfc822\n\n") +
                                 INNER).encode()), {
    "subject": "Fwd: Original question", "from": ANA, "text": "Can you check my order 77?", "flags": flags()})
add("bounce_report", crlf(b"""From: Mail Delivery Subsystem <MAILER-DAEMON@mx.example.com>
To: support@dispatch.example
Subject: Undelivered Mail Returned to Sender
Date: Mon, 30 Nov 2026 12:00:00 +0000
Auto-Submitted: auto-replied
Content-Type: multipart/report; report-type=delivery-status; boundary="rep"

--rep
Content-Type: text/plain

This is the mail system. I'm sorry to have to inform you that your message could not be delivered.
--rep
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.com
Final-Recipient: rfc822; nobody@example.com
Action: failed
Status: 5.1.1
--rep
Content-Type: text/rfc822-headers

From: support@dispatch.example
Subject: Re: your order
--rep--
"""), {"subject": "Undelivered Mail Returned to Sender",
       "from": {"name": "Mail Delivery Subsystem", "address": "MAILER-DAEMON@mx.example.com"},
       "text_contains": ["could not be delivered"], "flags": flags(bounce=True, auto_reply=True)})
add("bounce_null_return_path", crlf(b"""Return-Path: <>
From: Mail System <delivery@relay.example.net>
To: support@dispatch.example
Subject: Delivery failure
Date: Mon, 30 Nov 2026 12:00:00 +0000
Content-Type: multipart/mixed; boundary="d"

--d
Content-Type: text/plain

Delivery to the following recipient failed permanently.
--d
Content-Type: message/delivery-status

Action: failed
--d--
"""), {"subject": "Delivery failure", "from": {"name": "Mail System", "address": "delivery@relay.example.net"},
       "text": "Delivery to the following recipient failed permanently.", "flags": flags(bounce=True)})

# ---- loop prevention -----------------------------------------------------------------------------
simple("auto_reply_out_of_office", "I am out of the office until Monday.\n", "utf-8", subject="Out of office",
       extra_headers="Auto-Submitted: auto-replied\n", extra_expected={"flags": flags(auto_reply=True)})
simple("auto_reply_precedence_bulk", "Our newsletter.\n", "utf-8", subject="News",
       extra_headers="Precedence: bulk\n", extra_expected={"flags": flags(auto_reply=True)})
simple("auto_reply_x_autoreply", "Thanks for your mail.\n", "utf-8", subject="Re: Hello",
       extra_headers="X-Autoreply: yes\n", extra_expected={"flags": flags(auto_reply=True)})
simple("auto_submitted_no", "A person wrote this.\n", "utf-8", subject="Human",
       extra_headers="Auto-Submitted: no\nX-Auto-Response-Suppress: All\n", extra_expected={"flags": flags()})
simple("mailing_list", "Weekly digest of the list.\n", "utf-8", subject="[users] Digest",
       extra_headers="List-Id: Users <users.lists.example.org>\nList-Unsubscribe: <mailto:leave@lists.example.org>\n",
       extra_expected={"flags": flags(list=True)})
simple("no_reply_sender", "Your code is 123456.\n", "utf-8", subject="Your code", frm="Shop <No_Reply@shop.example>",
       from_expected={"name": "Shop", "address": "No_Reply@shop.example"},
       extra_expected={"flags": flags(no_reply=True)})
simple("own_address", "Sent by us.\n", "utf-8", subject="Re: Hello", frm="Support <Support@Dispatch.Example>",
       from_expected={"name": "Support", "address": "Support@Dispatch.Example"},
       extra_expected={"flags": flags(own=True), "own": "support@dispatch.example"})

# ---- quoted history ------------------------------------------------------------------------------
def reply(name, body, text, subject="Re: Your order"):
    simple(name, body, "utf-8", subject=subject, expected_text=text,
           extra_expected={"full_text_contains": [body.strip().splitlines()[-1]]})


reply("reply_en", "Yes, Tuesday is fine.\n\nOn Mon, 30 Nov 2026 at 10:00, Support <support@dispatch.example> wrote:\n"
      "> Would Tuesday suit you?\n>\n> Support\n", "Yes, Tuesday is fine.")
reply("reply_en_wrapped", "Thanks!\n\nOn Mon, Nov 30, 2026 at 10:00 AM Support Team\n<support@dispatch.example> wrote:\n\n"
      "> Your refund was issued.\n", "Thanks!")
reply("reply_es", "Sí, el martes me va bien.\n\nEl lun, 30 nov 2026 a las 10:00, Soporte (<support@dispatch.example>) "
      "escribió:\n> ¿Le va bien el martes?\n", "Sí, el martes me va bien.")
reply("reply_fr", "Oui, mardi me convient.\n\nLe lun. 30 nov. 2026 à 10:00, Support <support@dispatch.example> a écrit"
      " :\n> Mardi vous convient-il ?\n", "Oui, mardi me convient.")
reply("reply_de", "Ja, Dienstag passt.\n\nAm Mo., 30. Nov. 2026 um 10:00 Uhr schrieb Support "
      "<support@dispatch.example>:\n> Passt Ihnen Dienstag?\n", "Ja, Dienstag passt.")
reply("reply_outlook_original_message", "Please cancel it.\n\n-----Original Message-----\nFrom: Support\n"
      "Sent: Monday, November 30, 2026 10:00 AM\nTo: Ana\nSubject: Your order\n\nYour order shipped.\n",
      "Please cancel it.")
reply("reply_outlook_header_block", "Received, thank you.\n\n________________________________\n"
      "From: Support <support@dispatch.example>\nSent: Monday, November 30, 2026 10:00\nTo: Ana Pérez\n"
      "Subject: Your order\n\nYour order shipped.\n", "Received, thank you.")
reply("reply_trailing_quote_block", "See my answer above.\n\n> earlier text\n> more earlier text\n",
      "See my answer above.")
reply("reply_inline_answers_kept", "> Which size?\nMedium.\n> Which colour?\nBlue.\n",
      "> Which size?\nMedium.\n> Which colour?\nBlue.")
reply("reply_only_quoted_kept", "> Only a quote, nothing new.\n", "> Only a quote, nothing new.")
reply("reply_signature_kept", "Thanks for the help.\n\n-- \nAna Pérez\nACME Ltd.\n",
      "Thanks for the help.\n\n-- \nAna Pérez\nACME Ltd.")


def main():
    for name, raw, expected in CORPUS:
        with open(os.path.join(HERE, name + ".eml"), "wb") as f:
            f.write(raw)
        with open(os.path.join(HERE, name + ".expected.json"), "w", encoding="utf-8") as f:
            json.dump(expected, f, ensure_ascii=False, indent=2)
            f.write("\n")
    print(f"{len(CORPUS)} messages written to {HERE}")


if __name__ == "__main__":
    main()
