#!/usr/bin/env bash
# Installs the package scripts/package.sh built (build-deb/), checks it as an operator would,
# and removes and purges it, listing what each step leaves. For a throwaway machine (CI): it
# installs a system package and creates the dispatchd user. Needs root (or sudo).
#
#   scripts/package-check.sh
#
# Checked: apt installs it; `dispatchd --check-config` on the installed example configuration,
# as the service user, finds only the secrets it has not been given; `systemd-analyze verify`
# and `systemd-analyze security` on the installed unit (exposure at most 2.0); dispatchd
# started as the service user with a test configuration answers /readyz 200; remove keeps the
# configuration and the state, purge removes the state.
set -euo pipefail
cd "$(dirname "$0")/.."
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
deb=$(ls build-deb/dispatchd_*_amd64.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || { echo "package-check: no build-deb/dispatchd_*.deb (run scripts/package.sh)" >&2; exit 1; }
fail() { echo "package-check: FAIL: $*" >&2; exit 1; }
step() { echo; echo "== $*"; }

step "install $deb"
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "./$deb" >/dev/null
dpkg-query -W -f='${Status} ${Version}\n' dispatchd
for path in /usr/sbin/dispatchd /usr/bin/dispatchctl /lib/systemd/system/dispatchd.service \
  /lib/systemd/system/dispatchd-archive.timer /usr/lib/sysusers.d/dispatchd.conf /usr/lib/tmpfiles.d/dispatchd.conf \
  /usr/share/dispatchd/migrations/sqlite /usr/share/dispatchd/catalog/support.en.json \
  /usr/share/man/man8/dispatchd.8.gz /usr/share/man/man1/dispatchctl.1.gz /usr/share/man/man5/dispatchd.json.5.gz \
  /usr/share/man/man5/dispatchd-catalog.5.gz /usr/share/bash-completion/completions/dispatchctl \
  /usr/share/dispatchd/prometheus/dispatchd.rules.yml /usr/share/dispatchd/grafana/dispatchd.json \
  /etc/dispatchd/dispatchd.json.example; do
  [ -e "$path" ] || fail "$path is not installed"
done
echo "installed: the daemon, dispatchctl, units, sysusers/tmpfiles, migrations, catalogs, man pages, completion, monitoring"
getent passwd dispatchd >/dev/null || fail "no dispatchd user"
stat -c '%U:%G %a %n' /etc/dispatchd /etc/dispatchd/dispatchd.json.example /etc/dispatchd/credentials
[ "$(stat -c '%U:%G %a' /etc/dispatchd/dispatchd.json.example)" = "root:dispatchd 640" ] ||
  fail "the example configuration is not root:dispatchd 0640"
[ "$(stat -c '%U:%G %a' /etc/dispatchd)" = "root:dispatchd 750" ] || fail "/etc/dispatchd is not root:dispatchd 0750"
if runuser -u nobody -- cat /etc/dispatchd/dispatchd.json.example >/dev/null 2>&1; then
  fail "another user reads the example configuration"
fi
grep -q '^/etc/dispatchd/dispatchd.json.example$' /var/lib/dpkg/info/dispatchd.conffiles ||
  fail "the example configuration is not a conffile"

step "dispatchd --check-config on the example, as the service user"
out=$(runuser -u dispatchd -- /usr/sbin/dispatchd --check-config --config /etc/dispatchd/dispatchd.json.example 2>&1) &&
  fail "the example passed without its secrets"
echo "$out"
# Every problem is a secret the example names and this machine does not give it; given them
# (any value), it passes.
if echo "$out" | grep -v -E '^[a-z_.]+_env: secret [A-Z0-9_]+ is not set' | grep -q .; then
  fail "the example has problems other than its secrets"
fi
secrets=()
for name in $(echo "$out" | sed -n 's/.*: secret \([A-Z0-9_]*\) is not set.*/\1/p'); do secrets+=("$name=not-a-secret"); done
env "${secrets[@]}" runuser -u dispatchd -- /usr/sbin/dispatchd --check-config \
  --config /etc/dispatchd/dispatchd.json.example || fail "the example with its secrets does not pass"

step "systemd-analyze on the installed unit"
systemd-analyze verify /lib/systemd/system/dispatchd.service /lib/systemd/system/dispatchd-archive.service \
  /lib/systemd/system/dispatchd-archive.timer
echo "verify: clean"
bash tests/systemd/security_test.sh /lib/systemd/system/dispatchd.service

step "dispatchd started with a test configuration answers /readyz"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
install -d -o dispatchd -g dispatchd -m 0750 /var/lib/dispatchd
$sudo tee /etc/dispatchd/dispatchd.json >/dev/null <<CONFIG
{
  "database": "/var/lib/dispatchd/dispatchd.db",
  "catalog": "/usr/share/dispatchd/catalog/support.en.json",
  "http": {"listen": "127.0.0.1:$port"},
  "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "test", "api_key_env": "PACKAGE_CHECK_KEY"}
}
CONFIG
$sudo chgrp dispatchd /etc/dispatchd/dispatchd.json
$sudo chmod 0640 /etc/dispatchd/dispatchd.json
PACKAGE_CHECK_KEY=not-a-key runuser -u dispatchd -- /usr/sbin/dispatchd --config /etc/dispatchd/dispatchd.json \
  >/tmp/package-check-dispatchd.log 2>&1 &
pid=$!
ready=""
for _ in $(seq 1 100); do
  if ready=$(python3 -c 'import sys, urllib.request
print(urllib.request.urlopen(sys.argv[1], timeout=2).read().decode().strip())' "http://127.0.0.1:$port/readyz" \
    2>/dev/null); then break; fi
  sleep 0.2
done
kill -TERM "$pid" 2>/dev/null || true
wait "$pid" || true
[ -n "$ready" ] || { cat /tmp/package-check-dispatchd.log >&2; fail "/readyz did not answer 200"; }
echo "/readyz: $ready"
[ -f /var/lib/dispatchd/dispatchd.db ] || fail "no store was created in /var/lib/dispatchd"

leftovers() {
  echo "left: package state: $(dpkg-query -W -f='${db:Status-Abbrev}' dispatchd 2>/dev/null || echo 'none')"
  for path in /etc/dispatchd /var/lib/dispatchd /usr/sbin/dispatchd /lib/systemd/system/dispatchd.service; do
    if [ -e "$path" ]; then
      find "$path" -maxdepth 2 | sed 's/^/left: /'
    fi
  done
  getent passwd dispatchd >/dev/null && echo "left: the dispatchd system user (Debian keeps system users)"
  dpkg-statoverride --list | grep dispatchd | sed 's/^/left: statoverride /' || true
}

step "remove"
DEBIAN_FRONTEND=noninteractive $sudo apt-get remove -y -qq dispatchd >/dev/null
leftovers
[ ! -e /usr/sbin/dispatchd ] || fail "remove left the daemon"
[ -e /etc/dispatchd/dispatchd.json.example ] || fail "remove took the conffile"
[ -f /var/lib/dispatchd/dispatchd.db ] || fail "remove took the state"

step "purge"
DEBIAN_FRONTEND=noninteractive $sudo apt-get purge -y -qq dispatchd >/dev/null
leftovers
[ ! -e /var/lib/dispatchd ] || fail "purge left /var/lib/dispatchd"
[ ! -e /etc/dispatchd/dispatchd.json.example ] || fail "purge left the conffile"
if dpkg-statoverride --list | grep -q dispatchd; then fail "purge left a statoverride"; fi
$sudo rm -f /etc/dispatchd/dispatchd.json  # this check's own configuration
$sudo rmdir /etc/dispatchd 2>/dev/null || true
echo
echo "package-check: all checks passed"
