#!/usr/bin/env python3
"""The shipped monitoring files against a real Prometheus (Debian's) scraping a real dispatchd.

- Prometheus loads contrib/prometheus/dispatchd.rules.yml and scrapes dispatchd's /metrics;
  the target is up;
- every metric the rules and the Grafana dashboard (contrib/grafana/dispatchd.json) name is a
  family dispatchd exposes, and each of the dashboard's queries runs in Prometheus (its `# TYPE` lines, the
  histograms' _bucket/_count/_sum included), and Prometheus holds samples of it;
- a provoked condition fires its alert: the fake Graph API refuses the access token on the
  first send (error 190), the WhatsApp channel pauses, and DispatchdChannelPaused fires. The
  rules are loaded as shipped except their `for:` holds, set to 0s so that the test does not
  wait minutes (promtool's unit tests, contrib/prometheus/dispatchd.rules.test.yml, cover the
  holds).

Usage: prometheus_test.py BUILD_DIR SOURCE_DIR
"""
import json
import os
import re
import shutil
import sys
import tempfile
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import harness  # noqa: E402
from harness import check  # noqa: E402

BUILD, SOURCE = sys.argv[1], sys.argv[2]
RULES = os.path.join(SOURCE, "contrib", "prometheus", "dispatchd.rules.yml")
DASHBOARD = os.path.join(SOURCE, "contrib", "grafana", "dispatchd.json")


def rule_metrics(path):
    """The metric names the rules read: every dispatchd_* name in the file, and `up`."""
    with open(path) as f:
        text = f.read()
    return set(re.findall(r"\bdispatchd_[a-z_]+\b", text)) | ({"up"} if "up{" in text else set())


def dashboard_queries(path):
    """Each panel's PromQL, with the dashboard's datasource variable left alone (it is not in
    the queries)."""
    with open(path) as f:
        dashboard = json.load(f)
    return [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]


def family_of(name, families):
    for suffix in ("", "_bucket", "_count", "_sum"):
        if suffix and name.endswith(suffix) and name[: -len(suffix)] in families:
            return name[: -len(suffix)]
        if not suffix and name in families:
            return name
    return None


def prometheus_get(port, path, params=None):
    url = f"http://127.0.0.1:{port}{path}"
    if params:
        url += "?" + urllib.parse.urlencode(params)
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read().decode())


def prometheus_flow():
    prometheus = shutil.which("prometheus")
    check("Debian's prometheus is installed", prometheus is not None)
    work = tempfile.TemporaryDirectory(prefix="dispatchd-prometheus-")
    stack = harness.Stack(BUILD, SOURCE, graph_script="190",
                          extra_config={"escalation": {"notify_url": f"http://127.0.0.1:{harness.free_port()}/hook"}})
    server = None
    try:
        stack.start_daemon()
        with open(RULES) as f:
            rules = re.sub(r"(?m)^(\s+)for: \S+$", r"\1for: 0s", f.read())
        rules_path = os.path.join(work.name, "dispatchd.rules.yml")
        with open(rules_path, "w") as f:
            f.write(rules)
        config_path = os.path.join(work.name, "prometheus.yml")
        with open(config_path, "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - {rules_path}
scrape_configs:
  - job_name: dispatchd
    static_configs:
      - targets: ["127.0.0.1:{stack.port}"]
""")
        port = harness.free_port()
        server = harness.Process([prometheus, f"--config.file={config_path}",
                                  f"--storage.tsdb.path={os.path.join(work.name, 'data')}",
                                  f"--web.listen-address=127.0.0.1:{port}"], name="prometheus")
        server.wait_for_line("Server is ready to receive web requests", timeout=60)

        def target_up():
            targets = prometheus_get(port, "/api/v1/targets")["data"]["activeTargets"]
            return any(t["labels"].get("job") == "dispatchd" and t["health"] == "up" for t in targets)
        stack.wait_until(target_up, timeout=30, what="Prometheus scrapes dispatchd")

        # Provoke a paused channel: a message the model answers, whose send Graph refuses (190).
        status, _ = stack.post_webhook(harness.text_webhook("wamid.P1", "5215550900001", "¿A qué hora abren?"))
        check("the webhook is accepted", status == 200, status)
        stack.wait_until(lambda: "dispatchd_channel_paused{channel=\"whatsapp\"} 1" in stack.get("/metrics")[1],
                         timeout=60, what="the WhatsApp channel paused")

        status, exposition = stack.get("/metrics")
        families = set(re.findall(r"(?m)^# TYPE (\S+) ", exposition))
        wanted = rule_metrics(RULES)
        check("the rules read metrics", len(wanted) >= 10, sorted(wanted))
        unknown = sorted(n for n in wanted if n != "up" and not family_of(n, families))
        check("every metric the rules read is a family dispatchd exposes", not unknown, unknown)
        queries = dashboard_queries(DASHBOARD)
        check("the dashboard has panels", len(queries) >= 10, len(queries))
        on_board = set(re.findall(r"\bdispatchd_[a-z_]+\b", " ".join(queries)))
        unknown = sorted(n for n in on_board if not family_of(n, families))
        check("every metric the dashboard reads is a family dispatchd exposes", not unknown, unknown)
        failed = []
        for query in queries:
            answer = prometheus_get(port, "/api/v1/query", {"query": query})
            if answer.get("status") != "success":
                failed.append((query, answer))
        check("each of the dashboard's queries runs in Prometheus", not failed, failed)

        def firing():
            alerts = prometheus_get(port, "/api/v1/alerts")["data"]["alerts"]
            return [a for a in alerts if a["labels"]["alertname"] == "DispatchdChannelPaused" and a["state"] == "firing"]
        stack.wait_until(lambda: firing(), timeout=60, what="DispatchdChannelPaused firing in Prometheus")
        alert = firing()[0]
        check("the alert names the paused channel", alert["labels"].get("channel") == "whatsapp", alert)
        check("the alert carries its severity", alert["labels"].get("severity") == "critical", alert)

        # Prometheus holds samples of every metric the rules read that has one to hold now: the
        # families dispatchd writes samples for on every scrape (store families with nothing
        # counted yet write only their HELP and TYPE lines).
        sampled = set(re.findall(r"(?m)^([a-z_]+)(?:\{| )", exposition))
        missing = []
        for name in sorted(wanted):
            if name != "up" and name not in sampled:
                continue
            result = prometheus_get(port, "/api/v1/query", {"query": f"count({name})"})["data"]["result"]
            if not result:
                missing.append(name)
        check("Prometheus holds samples of each of them dispatchd wrote", not missing, missing)
        quiet = prometheus_get(port, "/api/v1/alerts")["data"]["alerts"]
        check("no alert for a down instance",
              not any(a["labels"]["alertname"] == "DispatchdInstanceDown" for a in quiet), quiet)
    finally:
        if server:
            server.stop()
        stack.close()
        work.cleanup()


if __name__ == "__main__":
    harness.run_flows([prometheus_flow])
