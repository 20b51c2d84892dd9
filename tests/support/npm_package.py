"""A pinned npm package for a test, installed into the build tree: the committed package.json
and package-lock.json copied from the test's folder, then `npm ci` there, only when the
version installed differs from the lock (once installed, the tests run offline). Shared by
the tests that run an npm package (tests/mcp/conformance/run_scenario.py,
tests/e2e/mcp_everything_test.py)."""
import json
import os
import shutil
import subprocess


def locked_version(here, package):
    """The version the lock in `here` pins for `package`."""
    with open(os.path.join(here, "package-lock.json")) as f:
        return json.load(f)["packages"]["node_modules/" + package]["version"]


def installed_version(work, package):
    """The version of `package` installed under `work`, or None."""
    try:
        with open(os.path.join(work, "node_modules", package, "package.json")) as f:
            return json.load(f).get("version")
    except (OSError, ValueError):
        return None


def install(here, work, package):
    """Installs the lock of `here` into `work`; prints what it did and returns True when the
    locked version of `package` is installed. REQUIRES: npm on PATH."""
    os.makedirs(work, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy2(os.path.join(here, name), os.path.join(work, name))
    wanted = locked_version(here, package)
    if installed_version(work, package) == wanted:
        print(f"{package} {wanted} is installed in {work}")
        return True
    done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--prefer-offline"], cwd=work,
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0 or installed_version(work, package) != wanted:
        print(f"npm ci did not install {package} {wanted}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        return False
    print(f"{package} {wanted} installed in {work}")
    return True
