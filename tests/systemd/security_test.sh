#!/usr/bin/env bash
# The unit's sandbox, scored by systemd itself: `systemd-analyze security --offline=yes`
# must report an overall exposure of 2.0 or less. Usage: security_test.sh UNIT_FILE
set -eu
unit=$1
out=$(systemd-analyze security --offline=yes "$unit" 2>&1) || true
echo "$out" | tail -3
score=$(echo "$out" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
[ -n "$score" ] || { echo "FAIL: no score in the output"; exit 1; }
python3 -c "import sys; s=float(sys.argv[1]); print(f'exposure {s}, limit 2.0'); sys.exit(0 if s <= 2.0 else 1)" "$score"
