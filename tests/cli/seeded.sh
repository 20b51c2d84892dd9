# Shared by the dispatchctl black-box tests that run on a seeded database
# (tests/support/seed.cpp): names the arguments, loads lib.sh and seeds $tmp/d.db.
# Sourced with the caller's arguments DISPATCHCTL DISPATCHD_SEED SOURCE_DIR, as
# `. "$3/tests/cli/seeded.sh"`.
set -u
ctl=$1
seed=$2
src=$3
. "$src/tests/cli/lib.sh"

db=$tmp/d.db
"$seed" "$db" >/dev/null || { echo "FAIL: seeding"; exit 1; }
q() { sqlite3 "$db" "$1"; }
