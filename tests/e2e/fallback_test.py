#!/usr/bin/env python3
"""A fallback provider end to end (docs/agent.md, "Fallback providers"): the real dispatchd with
llm.fallbacks naming a second fake model (its own port and model name), the primary fake
answering 503 while its outage file exists (fake_model --outage).

- the primary answers: the fallback hears nothing;
- the primary fails: its breaker opens, and the customers who write meanwhile are answered by
  the fallback, each attempt recording the fallback's provider and model; the primary hears
  only its probes;
- the primary answers again: the first call once its probe is due goes to it (the traffic
  probes it), its success closes the breaker, and the next messages are the primary's again;
- a re-ask stays on its provider: the fallback (8 s slow) answers a message with garbage while
  the primary fails; by the time the garbage comes back the primary answers again, and the
  re-ask still goes to the fallback, whose output its feedback quotes;
- the cost report names both models.

Usage: fallback_test.py BUILD_DIR SOURCE_DIR (on PostgreSQL with DISPATCHD_TEST_BACKEND=postgresql)
"""
import json
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

BUILD, SOURCE = sys.argv[1], sys.argv[2]


def metric(stack, name, model):
    status, body = stack.get("/metrics")
    match = re.search(rf'^{re.escape(name)}{{provider="openai",model="{model}"}} (\S+)$', body, re.M)
    return float(match.group(1)) if status == 200 and match else None


def models_of(stack, wamid):
    return [r[0] for r in stack.query("SELECT a.model FROM v_attempts a JOIN v_messages m ON m.message_id = a.message_id"
                                      " WHERE m.provider_message_id = ? ORDER BY a.attempt", wamid)]


def answered(stack, sender):
    return any(m[0] == sender for m in stack.graph_messages())


def model_requests(process):
    return sum('"event":"outage"' in line for line in list(process.lines))


REPLY = json.dumps({"accion": "enviar_mensaje", "destinatario": "{sender}", "contenido": "Gracias por escribirnos.",
                    "prioridad": "media"}, ensure_ascii=False)


def fallback_flow():
    fallback_port = harness.free_port()
    scenario = os.path.join(tempfile.mkdtemp(prefix="dispatchd-fallback-"), "fallback.json")
    with open(scenario, "w") as f:
        json.dump({"default": [REPLY], "rules": [{"when": "REASK", "replies": ["no es JSON", REPLY]}]}, f)
    # Slow, so that the primary is back before the garbage is: the re-ask then has a choice.
    fallback = harness.Process([os.path.join(BUILD, "tests", "fake_model"), "--port", str(fallback_port),
                                "--scenario", scenario, "--latency-ms", "8000"], name="fake_model_fallback")
    fallback.wait_for_line('"listening"')
    stack = harness.Stack(BUILD, SOURCE, extra_config={"llm": {"fallbacks": [
        {"provider": "openai", "base_url": f"http://127.0.0.1:{fallback_port}/v1", "model": "fallback-model",
         "api_key_env": "DISPATCHD_LLM_KEY"}]}})
    outage = os.path.join(stack.dir, "outage")
    stack.model.stop()
    stack.model = harness.Process([os.path.join(BUILD, "tests", "fake_model"), "--port", str(stack.model_port),
                                   "--outage", outage], name="fake_model")
    stack.model.wait_for_line('"listening"')
    try:
        stack.start_daemon()
        stack.post_webhook(harness.text_webhook("wamid.FB0", "5215560000000", "Hola"))
        stack.wait_until(lambda: answered(stack, "5215560000000"), what="the first answer")
        check("the primary answers while it is up", models_of(stack, "wamid.FB0") == ["fake-model"],
              models_of(stack, "wamid.FB0"))

        with open(outage, "w") as f:
            f.write("503\n")
        for n in range(1, 4):
            stack.post_webhook(harness.text_webhook(f"wamid.FB{n}", f"52155600000{n:02d}", "Hola"))
        stack.wait_until(lambda: metric(stack, "dispatchd_llm_breaker_open", "fake-model") == 1,
                         what="the primary's breaker open")
        before = model_requests(stack.model)
        senders = [f"52155600001{n:02d}" for n in range(10)]
        for n, sender in enumerate(senders):
            stack.post_webhook(harness.text_webhook(f"wamid.FBO{n}", sender, "Hola"))
        stack.wait_until(lambda: all(answered(stack, s) for s in senders), what="the fallback's answers")
        check("while the primary fails, its customers are answered by the fallback",
              all(models_of(stack, f"wamid.FBO{n}") == ["fallback-model"] for n in range(10)),
              [models_of(stack, f"wamid.FBO{n}") for n in range(10)])
        check("the primary heard only its probes meanwhile", model_requests(stack.model) - before <= 3,
              model_requests(stack.model) - before)
        status, body = stack.get("/readyz")
        check("/readyz names the failing primary", status == 200 and "llm openai/fake-model failing" in body,
              (status, body))

        # The fallback answers this one with garbage, 8 s from now.
        stack.post_webhook(harness.text_webhook("wamid.FBQ", "5215560000300", "REASK por favor"))
        # Its call is out: to the fallback, or first as the primary's probe, failed, and then retried
        # to the fallback (a failed probe puts the next one 2 s or more away).
        time.sleep(3)

        # Routed around, the primary is probed by the traffic itself: the first call once its probe
        # is due goes to it. Customers keep writing, one a second, until it is back.
        os.remove(outage)
        deadline, n = time.time() + 30, 0
        while metric(stack, "dispatchd_llm_breaker_open", "fake-model") != 0 and time.time() < deadline:
            stack.post_webhook(harness.text_webhook(f"wamid.FBR{n}", f"52155600003{n:02d}", "Hola"))
            n += 1
            time.sleep(1)
        check("the primary's breaker closed once a probe went to it",
              metric(stack, "dispatchd_llm_breaker_open", "fake-model") == 0, n)
        stack.post_webhook(harness.text_webhook("wamid.FBB", "5215560000200", "Hola"))
        stack.wait_until(lambda: answered(stack, "5215560000200"), what="the answer after the recovery")
        check("the primary answers again once back", models_of(stack, "wamid.FBB") == ["fake-model"],
              models_of(stack, "wamid.FBB"))
        for n in range(1, 4):
            stack.wait_until(lambda: answered(stack, f"52155600000{n:02d}"), what=f"wamid.FB{n} answered")
        stack.wait_until(lambda: answered(stack, "5215560000300"), what="wamid.FBQ answered")
        check("a re-ask stays on the provider whose garbage it quotes, though the primary is back",
              models_of(stack, "wamid.FBQ") == ["fallback-model", "fallback-model"], models_of(stack, "wamid.FBQ"))
        cost = stack.dispatchctl("cost", "--json")
        check("the cost report names both models", cost.returncode == 0 and "fallback-model" in cost.stdout and
              "fake-model" in cost.stdout, cost.stdout + cost.stderr)
        check("nothing escalated", stack.scalar("SELECT count(*) FROM v_escalations") == 0)
    except Exception:
        print("daemon:", "\n".join(stack.daemon.lines[-30:]) if stack.daemon else "")
        raise
    finally:
        stack.close()
        fallback.stop()


if __name__ == "__main__":
    sys.exit(harness.run_flows([fallback_flow]))
