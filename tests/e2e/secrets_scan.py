"""Searches a secrets audit folder (harness.py, DISPATCHD_SECRETS_AUDIT_DIR) for secret values.

Each secret is searched in the forms a leak would take: as is, either half alone (a log that
cuts it short), URL-encoded, JSON with "\\/",
hex (either case) and base64 (standard and URL-safe, at each of the three alignments it can
have inside a longer base64 text). Files are searched whole, as bytes (SQLite pages, WAL frames
and logs alike), except the model fake's request dumps (*.jsonl from fake_model
--dump-requests): there the Authorization header is where the LLM key belongs, so it is
checked to carry that key and nothing else, and every other header, the target and the body
are searched. *.secrets files list secrets made during the run and are not searched.
"""

import base64
import binascii
import json
import os
import re
import urllib.parse

MIN_LENGTH = 12  # shorter values would match by chance


def _base64_forms(raw: bytes):
    """The base64 texts that appear wherever `raw` is encoded inside longer data: one per
    alignment, trimmed of the characters that depend on the neighbouring bytes."""
    out = set()
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw)
        lead = (shift * 8 + 5) // 6  # characters that mix in the padding bytes
        usable = ((shift + len(raw)) * 8) // 6  # characters made of the secret's bits alone
        core = encoded[lead:usable]
        if len(core) >= MIN_LENGTH:
            out.add(core)
            out.add(core.replace(b"+", b"-").replace(b"/", b"_"))
    return out


def forms(secret: str):
    """{form name: bytes} for one secret value."""
    raw = secret.encode()
    out = {"raw": raw, "url-encoded": urllib.parse.quote(secret, safe="").encode(),
           "json \\/": secret.replace("/", "\\/").encode(), "hex": binascii.hexlify(raw),
           "HEX": binascii.hexlify(raw).upper()}
    if len(raw) >= 2 * MIN_LENGTH:  # a log that cuts a secret short still leaks it
        out["first half"], out["second half"] = raw[:len(raw) // 2], raw[len(raw) // 2:]
    for n, form in enumerate(sorted(_base64_forms(raw))):
        out[f"base64#{n}"] = form
    unique = {}
    for name, value in out.items():
        if value not in unique.values():
            unique[name] = value
    return unique


class Scan:
    def __init__(self, secrets):
        """secrets: {name: value}; values shorter than MIN_LENGTH are refused (ValueError)."""
        short = [name for name, value in secrets.items() if len(value) < MIN_LENGTH]
        if short:
            raise ValueError(f"too short to search for: {short}")
        self.secrets = secrets
        self.needles = [(name, form, needle) for name, value in secrets.items()
                        for form, needle in forms(value).items()]
        self.files = 0
        self.bytes = 0
        self.by_kind = {}  # file kind (name up to the first '-') -> [files, bytes]
        self.hits = []  # (where, secret name, form)
        self.model_requests = 0
        self.authorized_with_llm_key = 0

    def search(self, data: bytes, where: str):
        found = set()  # (secret, offset) covered by a hit already: a leak is one hit, not one per form
        for name, form, needle in self.needles:
            at = data.find(needle)
            while at != -1:
                if not any((name, at + i) in found for i in range(len(needle))):
                    self.hits.append((f"{where} @{at}", name, form))
                    found.update((name, at + i) for i in range(len(needle)))
                at = data.find(needle, at + 1)

    def _count(self, path, size):
        self.files += 1
        self.bytes += size
        # harness.audit_path names a record KIND-PID-SERIAL[.ext]; a stack's files sit in a folder so named.
        named = [re.match(r"^(.+)-\d+-\d+(\.\w+)?$", part) for part in path.split(os.sep)]
        kind = next((m.group(1) for m in named if m), os.path.basename(path))
        totals = self.by_kind.setdefault(kind, [0, 0])
        totals[0] += 1
        totals[1] += size

    def model_dump(self, path, llm_key):
        with open(path, "rb") as f:
            data = f.read()
        self._count(path, len(data))
        for n, line in enumerate(data.splitlines()):
            request = json.loads(line)
            self.model_requests += 1
            where = f"{path} request {n + 1}"
            for name, value in request["headers"]:
                if name == "authorization" and value == f"Bearer {llm_key}":
                    self.authorized_with_llm_key += 1
                    continue
                self.search(f"{name}: {value}".encode(), f"{where} header {name}")
            self.search(request["target"].encode(), f"{where} target")
            self.search(request["body"].encode(), f"{where} body")

    def tree(self, root, llm_key):
        for folder, _, files in sorted(os.walk(root)):
            for name in sorted(files):
                path = os.path.join(folder, name)
                if name.endswith(".secrets") or not os.path.isfile(path):
                    continue
                if name.startswith("model-requests") and name.endswith(".jsonl"):
                    self.model_dump(path, llm_key)
                    continue
                with open(path, "rb") as f:
                    data = f.read()
                self._count(path, len(data))
                self.search(data, path)


def made_during_run(root):
    """{name: value} of the secrets in the *.secrets files under root."""
    out = {}
    for folder, _, files in os.walk(root):
        for name in sorted(files):
            if name.endswith(".secrets"):
                with open(os.path.join(folder, name)) as f:
                    for n, line in enumerate(f):
                        if line.strip():
                            out[f"{os.path.relpath(os.path.join(folder, name), root)}#{n + 1}"] = line.strip()
    return out
