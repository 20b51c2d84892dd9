"""What the browser tests (staff_test.py, desk_test.py) share: finding Debian's chromium and
node, installing playwright-core from the committed package-lock.json into the build tree,
making escalations with the fake model, and running a node script that may ask the driver
for something ("@@command" lines, one JSON line back each).

playwright-core is installed with `npm ci` into BUILD_DIR/tests/browser/ (with a copy of the
scripts), only when the version there differs from the lock: once installed, the tests run
offline.
"""
import json
import os
import shutil
import subprocess
import sys

SKIPPED = 77
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import harness  # noqa: E402

# Copied next to node_modules in the build tree: the lock and every script node runs.
COPIED = ("package.json", "package-lock.json", "browser_support.mjs", "staff_test.mjs", "desk_test.mjs",
          "template_test.mjs", "media_test.mjs")
check = harness.check


def work_dir(build):
    return os.path.join(build, "tests", "browser")


def find_tools():
    chromium = os.environ.get("DISPATCHD_CHROMIUM") or shutil.which("chromium")
    if not chromium and os.access("/usr/bin/chromium", os.X_OK):
        chromium = "/usr/bin/chromium"
    return chromium, shutil.which("node")


def locked_version():
    with open(os.path.join(HERE, "package-lock.json")) as f:
        return json.load(f)["packages"]["node_modules/playwright-core"]["version"]


def installed_version(work):
    try:
        with open(os.path.join(work, "node_modules", "playwright-core", "package.json")) as f:
            return json.load(f).get("version")
    except (OSError, ValueError):
        return None


def install_playwright(work):
    """The scripts and the lock copied to the build tree, `npm ci` there when needed."""
    os.makedirs(work, exist_ok=True)
    for name in COPIED:
        shutil.copy2(os.path.join(HERE, name), os.path.join(work, name))
    if installed_version(work) == locked_version():
        return True
    npm = shutil.which("npm")
    if not npm:
        check("npm is installed (scripts/install-deps.sh)", False)
        return False
    result = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--prefer-offline"], cwd=work, capture_output=True,
                            text=True, timeout=600)
    check("npm ci installs playwright-core " + locked_version(), result.returncode == 0, result.stderr[-2000:])
    return result.returncode == 0 and installed_version(work) == locked_version()


def main(build, flow):
    """Skips (77) without chromium or node, installs playwright-core, then runs
    `flow(chromium, node)` as harness.run_flows does: the exit code."""
    chromium, node = find_tools()
    if not chromium or not node:
        print(f"skip: the browser test needs chromium and node (found {chromium}, {node}); "
              "scripts/install-deps.sh installs them")
        return SKIPPED
    if not install_playwright(work_dir(build)):
        return harness.run_flows([])

    def in_chromium():
        flow(chromium, node)

    in_chromium.__name__ = flow.__name__
    return harness.run_flows([in_chromium])


def check_screenshots(folder, names):
    missing = [name for name in names if not os.path.exists(os.path.join(folder, name + ".png"))]
    check("screenshots written to " + folder, not missing, missing)


def escalation_of(stack, wamid):
    """(escalation_id, reason, status, assignee) of the escalation of a message, or None."""
    rows = stack.query("SELECT e.escalation_id, e.reason, e.status, e.assignee FROM v_escalations e"
                       " JOIN v_messages m ON m.message_id = e.message_id WHERE m.provider_message_id = ?", wamid)
    return rows[0] if rows else None


def escalate(stack, wamid, sender, text):
    """Posts a message the fake model fails on and waits for its escalation's id."""
    status, body = stack.post_webhook(harness.text_webhook(wamid, sender, text))
    check(f"webhook {wamid} accepted", status == 200, (status, body))
    stack.wait_until(lambda: escalation_of(stack, wamid), what=f"{wamid} escalated")
    return escalation_of(stack, wamid)[0]


def run_node(argv, work, env, answer=None):
    """Runs a node script in `work`, printing its output, answering each "@@command" line
    with one line of JSON: answer(command). The script's exit code."""
    child = subprocess.Popen(argv, cwd=work, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             bufsize=1)
    try:
        for line in child.stdout:
            print(line, end="", flush=True)
            command = line.strip()
            if not command.startswith("@@"):
                continue
            child.stdin.write(json.dumps(answer(command[2:]) if answer else None) + "\n")
            child.stdin.flush()
        return child.wait(timeout=300)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
