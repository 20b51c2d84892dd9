# Shared by the dispatchctl black-box tests: a temp folder, pass/fail bookkeeping and
# `expect NAME WANT_EXIT GREP_PATTERN -- COMMAND...` (stdin comes from the caller).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Results go to a file: `producer | expect ...` runs expect in a subshell.
results=$tmp/results
: >"$results"
pass() { echo pass >>"$results"; }
fail() { echo "FAIL $*"; echo fail >>"$results"; }

expect() {
  local name=$1 want=$2 pattern=$3
  shift 4
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    fail "$name: exit $got, want $want"; cat "$tmp/out" "$tmp/err"; return
  fi
  if [ -n "$pattern" ] && ! grep -qE -- "$pattern" "$tmp/out" "$tmp/err"; then
    fail "$name: output does not match $pattern"; cat "$tmp/out" "$tmp/err"; return
  fi
  pass
}

# Prints the tally and fails the script when anything failed.
summary() {
  local passed failed
  passed=$(grep -c pass "$results")
  failed=$(grep -c fail "$results")
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
