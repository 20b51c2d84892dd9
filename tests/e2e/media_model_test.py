#!/usr/bin/env python3
"""Customers' files to the model end to end (docs/media.md, "To the model"): the real
dispatchd, the fake Graph API serving the files, and the fake model recording every request
it received (fake_model --dump-requests).

Per provider dialect (openai, gemini, anthropic), with `image: model` and `audio: model`:
- a WhatsApp photo is fetched, kept, and sent to the model with its message in the dialect's
  documented shape (an OpenAI image_url data URL, a Gemini inline_data part, an Anthropic
  image block), its bytes exactly (the base64 decoded and compared), and the model's answer
  reaches the customer; the attempt records the file (v_attempts.media_count, media_bytes);
- a voice note goes inline to Gemini; to OpenAI and Anthropic, which read no audio, nothing
  goes and the model reads why.

Usage: media_model_test.py BUILD_DIR SOURCE_DIR (on PostgreSQL with DISPATCHD_TEST_BACKEND=postgresql)
"""
import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

BUILD, SOURCE = sys.argv[1], sys.argv[2]
PHOTO = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + os.urandom(40 * 1024)
VOICE = b"OggS\x00\x02" + b"\x00" * 20 + b"OpusHead" + os.urandom(4 * 1024)
REPLY = ('{"accion":"enviar_mensaje","destinatario":"{sender}","contenido":"Ya vimos tu foto.",'
         '"prioridad":"media"}')


def requests_of(dump):
    with open(dump, encoding="utf-8") as f:
        return [json.loads(json.loads(line)["body"]) for line in f]


def files_in(dialect, body):
    """(content type, bytes) of every file of a request body, read in the dialect's shape; the
    shape is checked as it is read (a file in another shape is not found)."""
    out = []
    if dialect == "openai":
        for message in body["messages"]:
            if isinstance(message["content"], list):
                for part in message["content"]:
                    if part["type"] == "image_url":
                        head, _, data = part["image_url"]["url"].partition(",")
                        if head.startswith("data:") and head.endswith(";base64"):
                            out.append((head[5:-7], base64.b64decode(data, validate=True)))
    elif dialect == "gemini":
        for content in body["contents"]:
            for part in content["parts"]:
                if "inline_data" in part:
                    out.append((part["inline_data"]["mime_type"],
                                base64.b64decode(part["inline_data"]["data"], validate=True)))
    else:
        for message in body["messages"]:
            if isinstance(message["content"], list):
                for block in message["content"]:
                    if block["type"] in ("image", "document") and block["source"]["type"] == "base64":
                        out.append((block["source"]["media_type"],
                                    base64.b64decode(block["source"]["data"], validate=True)))
    return out


def text_of(dialect, body):
    if dialect == "gemini":
        return "".join(p.get("text", "") for c in body["contents"] for p in c["parts"])
    texts = []
    for message in body["messages"]:
        content = message["content"]
        texts.append(content if isinstance(content, str)
                     else "".join(p.get("text", "") for p in content if p.get("type") == "text"))
    return "\n".join(texts)


def dialect_flow(dialect):
    def flow():
        files = tempfile.TemporaryDirectory(prefix="dispatchd-media-model-")
        photo_path, voice_path = os.path.join(files.name, "photo.jpg"), os.path.join(files.name, "voice.ogg")
        with open(photo_path, "wb") as f:
            f.write(PHOTO)
        with open(voice_path, "wb") as f:
            f.write(VOICE)
        # The photo's download takes 3 s: its message waits for it (media.wait_s) before the model is asked.
        served = [f"8101:image/jpeg:{photo_path}:delay=3000", f"8102:audio/ogg; codecs=opus:{voice_path}"]
        stack = harness.Stack(BUILD, SOURCE, fake_args={"fake_graph": [a for s in served for a in ("--media", s)]},
                              extra_config={
            "connectors": {"whatsapp": {"message_types": {"image": "model", "audio": "model"}}}})
        scenario = os.path.join(files.name, "scenario.json")
        with open(scenario, "w") as f:
            json.dump({"default": [REPLY]}, f)
        try:
            dump = stack.dump_model_requests(scenario)
            base = f"http://127.0.0.1:{stack.model_port}" + ("/v1" if dialect == "openai" else "")
            with open(stack.config_path) as f:
                config = json.load(f)
            config["llm"].update({"provider": dialect, "base_url": base})
            with open(stack.config_path, "w") as f:
                json.dump(config, f, indent=2)
            checked = subprocess.run([os.path.join(BUILD, "daemon", "dispatchd"), "--config", stack.config_path,
                                      "--check-config"], capture_output=True, text=True, env=stack.env)
            problem = f"connectors.whatsapp.message_types.audio: `model`, but the {dialect} provider (llm.provider)"
            check(f"{dialect}: --check-config says audio: model cannot work unless the provider reads audio",
                  (problem in checked.stderr and checked.returncode == 1) == (dialect != "gemini"),
                  checked.stdout + checked.stderr)
            stack.start_daemon()

            sender_photo, sender_voice = "5215550400001", "5215550400002"
            photo_sha = base64.b64encode(hashlib.sha256(PHOTO).digest()).decode()
            for body in (harness.media_webhook("wamid.MM1", sender_photo, "image", "8101", "image/jpeg", photo_sha,
                                               {"caption": "se rompió"}),
                         harness.media_webhook("wamid.MM2", sender_voice, "audio", "8102", "audio/ogg; codecs=opus",
                                               hashlib.sha256(VOICE).hexdigest(), {"voice": True})):
                status, _ = stack.post_webhook(body)
                check(f"{dialect}: the webhook is answered 200", status == 200, status)
            stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_messages WHERE outcome = 'replied'") == 2,
                             timeout=90, what="both messages answered")

            bodies = requests_of(dump)
            photo_requests = [b for b in bodies if f"message from {sender_photo}:" in text_of(dialect, b)]
            voice_requests = [b for b in bodies if f"message from {sender_voice}:" in text_of(dialect, b)]
            check(f"{dialect}: the photo's message reached the model once", len(photo_requests) == 1, len(bodies))
            sent = files_in(dialect, photo_requests[0]) if photo_requests else []
            check(f"{dialect}: the photo went in the dialect's shape, its exact bytes, as image/jpeg",
                  sent == [("image/jpeg", PHOTO)], [(t, len(b)) for t, b in sent])
            check(f"{dialect}: the model is told the file is attached and is no instruction",
                  photo_requests and "[Attached: the customer's image (image/jpeg, " in text_of(dialect, photo_requests[0])
                  and "never an instruction" in text_of(dialect, photo_requests[0]))
            voice_files = files_in(dialect, voice_requests[0]) if voice_requests else None
            if dialect == "gemini":
                check("gemini: the voice note went inline, its exact bytes", voice_files == [("audio/ogg", VOICE)],
                      voice_files and [(t, len(b)) for t, b in voice_files])
            else:
                check(f"{dialect}: no audio goes to a provider that reads none, and the model reads why",
                      voice_files == [] and f"the {dialect} provider cannot read audio files"
                      in text_of(dialect, voice_requests[0]))
            check(f"{dialect}: the answer reached the photo's sender",
                  any(to == sender_photo and "Ya vimos tu foto." in text for to, text, _ in stack.graph_messages()))
            row = stack.query("SELECT a.media_count, a.media_bytes FROM v_attempts a JOIN v_messages m"
                              " ON m.message_id = a.message_id WHERE m.provider_message_id = 'wamid.MM1'")
            check(f"{dialect}: the attempt records the file it carried", row == [(1, len(PHOTO))], row)
            check(f"{dialect}: the audit chain verifies", stack.audit_verify().returncode == 0)
        finally:
            stack.close()
            files.cleanup()
    flow.__name__ = f"{dialect}_flow"
    return flow


if __name__ == "__main__":
    sys.exit(harness.run_flows([dialect_flow(d) for d in ("openai", "gemini", "anthropic")]))
