#!/usr/bin/env bash
# Installs the Debian 12 packages dispatchd builds and tests with, skipping what is
# already there. The single source of the package list: scripts/test.sh, scripts/demo.sh,
# scripts/validator-demo.sh, CONTRIBUTING.md and developers all call this script.
set -euo pipefail

packages=(
  g++ cmake ninja-build make pkg-config
  libboost-dev libboost-system-dev   # Asio and Beast (header-only), system for Asio
  rapidjson-dev libcurl4-openssl-dev libsqlite3-dev sqlite3
  libpq-dev postgresql               # the PostgreSQL store; the tests start a throwaway server
  libspdlog-dev catch2 libsystemd-dev libssl-dev
  libgoogle-perftools-dev            # tcmalloc, dispatchd's allocator
  libgmime-3.0-dev libxml2-dev       # the Gmail connector: MIME and HTML
  python3                            # test fakes and demo simulators
  haproxy                            # the test of several instances behind a load balancer
  systemd                            # systemd-analyze: the unit's security score test
  chromium                           # the staff page's browser test (headless)
  dovecot-imapd dovecot-lmtpd postfix  # the mail channel's tests start a throwaway pair
  prometheus                         # promtool and a throwaway server: the monitoring files' tests
  scdoc                              # the man pages
  bash-completion                    # the test of dispatchctl's completion
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# Node.js runs the browser test's driver (playwright-core, from npm) and the benchmark's
# comparison pipeline; a machine may already have it from another source (whose nodejs
# bundles npm), so look for the commands.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# Postfix asks what kind of mail system this is: "No configuration" writes no main.cf.
echo "postfix postfix/main_mailer_type select No configuration" | $sudo debconf-set-selections
# The mail packages would start system-wide Dovecot (ports 143, 993) and Postfix (25), and
# prometheus its server (9090): the tests start their own, so none may run. A policy-rc.d that
# denies every start (exit 101) holds for this install only, unless the machine has one of
# its own (containers often do), which is left as it is; after the install the services
# are disabled for the next boot too (systemctl works offline).
policy=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
  policy=/usr/sbin/policy-rc.d
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod 755 "$policy"
  trap '$sudo rm -f "$policy"' EXIT
fi
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Only the services this run installed: a mail server the machine already had stays.
services=()
[[ " ${missing[*]} " == *" postfix "* ]] && services+=(postfix)
[[ " ${missing[*]} " == *" dovecot-imapd "* ]] && services+=(dovecot)
[[ " ${missing[*]} " == *" prometheus "* ]] && services+=(prometheus)
if [ ${#services[@]} -gt 0 ] && command -v systemctl >/dev/null; then
  $sudo systemctl disable --now "${services[@]}" >/dev/null 2>&1 || true
fi
