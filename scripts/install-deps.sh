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
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
