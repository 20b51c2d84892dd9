#!/usr/bin/env bash
# A throwaway mail-server pair for the tests of an IMAP/SMTP channel: Debian's Dovecot
# (IMAP, LMTP, SASL auth) and Postfix (SMTP and submission), on 127.0.0.1 at free ports,
# with everything they write under DIR and nothing in /etc or the system's services.
#
#   servers.sh start DIR            create (first time) and start both; prints DIR/env
#   servers.sh stop DIR             stop both and delete DIR's servers (DIR/env goes too)
#   servers.sh stop-dovecot DIR     stop Dovecot only (the mail stays): a server restart
#   servers.sh start-dovecot DIR    start it again on the same mail and ports
#   servers.sh kick DIR USER        close USER's IMAP sessions (Dovecot says BYE): a stopped
#                                   Dovecot leaves the sessions already open running
#
# DIR receives `env`, shell-sourceable KEY=VALUE lines: IMAP_PORT (STARTTLS), IMAPS_PORT
# (implicit TLS), SUBMISSION_PORT (STARTTLS, AUTH PLAIN/LOGIN), SMTP_PORT (no auth, takes
# mail for example.test only), CA_FILE (the test CA that signed the servers' certificate
# for 127.0.0.1 and localhost), MAILDIR_ROOT, and the users: SUPPORT_USER/SUPPORT_PASSWORD
# (soporte@example.test) and CUSTOMER_USER/CUSTOMER_PASSWORD (ana@example.test).
# Postfix hands mail for example.test to Dovecot over LMTP (a unix socket in DIR); mail
# for any other domain never leaves: it is refused at RCPT, unauthenticated with 554 (relay
# access denied), authenticated with 550 (its transport is `error`; so is relay's).
# Logs: DIR/dovecot/dovecot.log, DIR/postfix/postfix.log. Dovecot counts a connection from
# 127.0.0.1 to 127.0.0.1 as secured: its IMAP port allows LOGIN before STARTTLS.
#
# Privileges. Dovecot runs unprivileged: as the invoking user, or as the `dovecot` account
# when run as root (its processes then are all that one account: no chroot, no dovenull;
# default_login_user, default_internal_user and mail_uid name it). Postfix cannot: its
# `postfix` command and master are reserved for the superuser, so `start` and `stop` need
# root for Postfix (CI and the developers' machines run as root); its daemons then run as
# the `postfix` account (mail_owner) with DIR/postfix as queue and data directories.
# Without root the script says so and exits 2 (CTest's skip), as it does when the
# packages are missing (scripts/install-deps.sh installs them).
set -euo pipefail

command=${1:?usage: servers.sh start|stop|stop-dovecot|start-dovecot DIR | kick DIR USER}
dir=${2:?usage: servers.sh start|stop|stop-dovecot|start-dovecot DIR | kick DIR USER}
if ! command -v dovecot >/dev/null || [ ! -x /usr/lib/dovecot/lmtp ] || [ ! -x /usr/lib/dovecot/imap ] ||
  ! command -v postfix >/dev/null; then
  echo "servers.sh: no Dovecot or Postfix (apt-get install dovecot-imapd dovecot-lmtpd postfix;" \
    "scripts/install-deps.sh does)" >&2
  exit 2
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "servers.sh: Postfix starts only as root (its master is reserved for the superuser)" >&2
  exit 2
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

# Dovecot's account: `dovecot` (the package's) under root, else the invoking user.
if [ "$(id -u)" -eq 0 ]; then
  dovecot_user=dovecot
else
  dovecot_user=$(id -un)
fi
dovecot_group=$(id -gn "$dovecot_user")
dovecot_uid=$(id -u "$dovecot_user")

as_dovecot() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u "$dovecot_user" -- "$@"
  else
    "$@"
  fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The accounts' daemons must reach DIR: refuse a DIR under a folder they cannot enter.
check_reachable() {
  local who
  for who in "$dovecot_user" postfix; do
    if ! runuser -u "$who" -- test -x "$dir"; then
      echo "servers.sh: the $who account cannot enter $dir (a parent folder is private)" >&2
      exit 1
    fi
  done
}

make_certificates() {
  local tls=$dir/tls
  mkdir -p "$tls"
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=dispatchd test CA" \
    -keyout "$tls/ca.key" -out "$tls/ca.pem" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$tls/server.key" \
    -out "$tls/server.csr" 2>/dev/null
  printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
    "extendedKeyUsage=serverAuth" "subjectAltName=IP:127.0.0.1,DNS:localhost" >"$tls/server.ext"
  openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -CAcreateserial \
    -days 30 -extfile "$tls/server.ext" -out "$tls/server.pem" 2>/dev/null
  rm -f "$tls/server.csr" "$tls/server.ext" "$tls/ca.key" "$tls/ca.srl"
  # Dovecot (its own account) and Postfix (root reads it before dropping privileges).
  chmod 644 "$tls/ca.pem" "$tls/server.pem"
  chmod 640 "$tls/server.key"
  chgrp "$dovecot_group" "$tls/server.key"
}

write_dovecot() {
  local d=$dir/dovecot
  mkdir -p "$d/run" "$d/state" "$d/mail"
  {
    printf '%s:{PLAIN}%s::::::\n' soporte@example.test "$support_password"
    printf '%s:{PLAIN}%s::::::\n' ana@example.test "$customer_password"
  } >"$d/users"
  chmod 640 "$d/users"
  cat >"$d/dovecot.conf" <<EOF
# Written by tests/mail/servers.sh: a throwaway server, everything under $d.
protocols = imap lmtp
listen = 127.0.0.1
base_dir = $d/run
state_dir = $d/state
instance_name = dispatchd-test-$imap_port
log_path = $d/dovecot.log
info_log_path = $d/dovecot.log
debug_log_path = $d/dovecot.log

# One unprivileged account for everything: no chroot, no privilege changes.
default_login_user = $dovecot_user
default_internal_user = $dovecot_user
default_internal_group = $dovecot_group
mail_uid = $dovecot_user
mail_gid = $dovecot_group
first_valid_uid = $dovecot_uid
last_valid_uid = $dovecot_uid
first_valid_gid = 0

ssl = yes
ssl_cert = <$dir/tls/server.pem
ssl_key = <$dir/tls/server.key
ssl_dh = </usr/share/dovecot/dh.pem
ssl_min_protocol = TLSv1.2
# Plain-text logins only over TLS; but Dovecot counts a connection from 127.0.0.1 to
# 127.0.0.1 as secured whatever the settings, so here LOGIN works before STARTTLS too.
disable_plaintext_auth = yes
auth_mechanisms = plain login

passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%Lu $d/users
}
userdb {
  driver = passwd-file
  args = username_format=%Lu $d/users
  default_fields = home=$d/mail/%Ld/%Ln
}
mail_location = maildir:$d/mail/%Ld/%Ln/Maildir
namespace inbox {
  inbox = yes
}

service imap-login {
  chroot =
  inet_listener imap {
    address = 127.0.0.1
    port = $imap_port
  }
  inet_listener imaps {
    address = 127.0.0.1
    port = $imaps_port
    ssl = yes
  }
}
service pop3-login {
  chroot =
}
service submission-login {
  chroot =
}
service lmtp {
  unix_listener lmtp-postfix {
    mode = 0666
  }
}
service auth {
  unix_listener auth-postfix {
    mode = 0666
  }
}
service auth-worker {
  user = $dovecot_user
}
service anvil {
  chroot =
}
service imap-urlauth-login {
  chroot =
}
protocol lmtp {
  postmaster_address = postmaster@example.test
}
EOF
  chown -R "$dovecot_user:$dovecot_group" "$d"
}

write_postfix() {
  local p=$dir/postfix
  mkdir -p "$p/etc" "$p/queue" "$p/data"
  chown postfix: "$p/data"
  cat >"$p/etc/main.cf" <<EOF
# Written by tests/mail/servers.sh: a throwaway server, everything under $p.
compatibility_level = 3.6
queue_directory = $p/queue
data_directory = $p/data
mail_owner = postfix
setgid_group = postdrop
maillog_file_prefixes = $p
maillog_file = $p/postfix.log
myhostname = mail.example.test
mydomain = example.test
myorigin = example.test
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.1/32
mydestination =
local_recipient_maps =
alias_maps =
alias_database =
biff = no
# Mail for example.test goes to Dovecot; nothing else ever leaves.
virtual_mailbox_domains = example.test
virtual_transport = lmtp:unix:$dir/dovecot/run/lmtp-postfix
relayhost =
default_transport = error:mail outside example.test is not delivered by the test server
relay_transport = error:mail outside example.test is not delivered by the test server
smtpd_relay_restrictions = permit_sasl_authenticated, reject_unauth_destination
smtpd_recipient_restrictions =
smtpd_tls_cert_file = $dir/tls/server.pem
smtpd_tls_key_file = $dir/tls/server.key
smtpd_tls_security_level = may
smtpd_tls_auth_only = yes
smtpd_sasl_type = dovecot
smtpd_sasl_path = $dir/dovecot/run/auth-postfix
smtpd_sasl_auth_enable = no
smtp_tls_security_level = none
# Mail a delivery deferred (Dovecot stopped or busy) is tried again within seconds, not the
# minutes a real queue waits: the tests restart Dovecot and load it.
queue_run_delay = 1s
minimal_backoff_time = 1s
maximal_backoff_time = 2s
EOF
  # No chroot anywhere: the daemons reach DIR's sockets by absolute path.
  cat >"$p/etc/master.cf" <<EOF
127.0.0.1:$smtp_port inet n - n - - smtpd
127.0.0.1:$submission_port inet n - n - - smtpd
  -o syslog_name=postfix/submission
  -o smtpd_tls_security_level=encrypt
  -o smtpd_sasl_auth_enable=yes
  -o smtpd_client_restrictions=permit_sasl_authenticated,reject
  -o smtpd_relay_restrictions=permit_sasl_authenticated,reject
pickup unix n - n 60 1 pickup
cleanup unix n - n - 0 cleanup
qmgr unix n - n 300 1 qmgr
tlsmgr unix - - n 1000? 1 tlsmgr
rewrite unix - - n - - trivial-rewrite
bounce unix - - n - 0 bounce
defer unix - - n - 0 bounce
trace unix - - n - 0 bounce
verify unix - - n - 1 verify
flush unix n - n 1000? 0 flush
proxymap unix - - n - - proxymap
proxywrite unix - - n - 1 proxymap
smtp unix - - n - - smtp
relay unix - - n - - smtp
showq unix n - n - - showq
error unix - - n - - error
retry unix - - n - - error
discard unix - - n - - discard
lmtp unix - - n - - lmtp
anvil unix - - n - 1 anvil
scache unix - - n - 1 scache
postlog unix-dgram n - n - 1 postlogd
EOF
}

dovecot_start() {
  check_reachable
  if ! as_dovecot dovecot -c "$dir/dovecot/dovecot.conf" 2>"$dir/dovecot/start.err"; then
    echo "servers.sh: Dovecot did not start:" >&2
    cat "$dir/dovecot/start.err" >&2
    tail -20 "$dir/dovecot/dovecot.log" >&2 2>/dev/null || true
    exit 1
  fi
  wait_port "$imap_port" Dovecot "$dir/dovecot/dovecot.log"
  wait_port "$imaps_port" Dovecot "$dir/dovecot/dovecot.log"
}

dovecot_stop() {
  local pid_file=$dir/dovecot/run/master.pid pid
  [ -f "$pid_file" ] || return 0
  pid=$(cat "$pid_file")
  as_dovecot doveadm -c "$dir/dovecot/dovecot.conf" stop >/dev/null 2>&1 || kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$pid_file"
}

postfix_start() {
  check_reachable
  if ! postfix -c "$dir/postfix/etc" start >"$dir/postfix/start.err" 2>&1; then
    echo "servers.sh: Postfix did not start:" >&2
    cat "$dir/postfix/start.err" >&2
    tail -20 "$dir/postfix/postfix.log" >&2 2>/dev/null || true
    exit 1
  fi
  wait_port "$smtp_port" Postfix "$dir/postfix/postfix.log"
  wait_port "$submission_port" Postfix "$dir/postfix/postfix.log"
}

postfix_stop() {
  local pid_file=$dir/postfix/queue/pid/master.pid pid
  [ -f "$pid_file" ] || return 0
  pid=$(tr -d ' ' <"$pid_file")
  postfix -c "$dir/postfix/etc" stop >/dev/null 2>&1 || kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

wait_port() {
  local port=$1 what=$2 log=$3
  for _ in $(seq 100); do
    python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $port), 1).close()" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "servers.sh: $what does not answer on 127.0.0.1:$port; its log:" >&2
  tail -20 "$log" >&2 2>/dev/null || true
  exit 1
}

load_env() {
  # shellcheck disable=SC1091
  . "$dir/env"
  # shellcheck disable=SC2153  # the upper-case names come from DIR/env
  imap_port=$IMAP_PORT imaps_port=$IMAPS_PORT smtp_port=$SMTP_PORT submission_port=$SUBMISSION_PORT
}

case "$command" in
  start)
    if [ ! -f "$dir/env" ]; then
      chmod 755 "$dir"
      imap_port=$(free_port) imaps_port=$(free_port) smtp_port=$(free_port) submission_port=$(free_port)
      support_password=$(python3 -c 'import secrets; print(secrets.token_hex(12))')
      customer_password=$(python3 -c 'import secrets; print(secrets.token_hex(12))')
      make_certificates
      write_dovecot
      write_postfix
      cat >"$dir/env" <<EOF
IMAP_PORT=$imap_port
IMAPS_PORT=$imaps_port
SUBMISSION_PORT=$submission_port
SMTP_PORT=$smtp_port
CA_FILE=$dir/tls/ca.pem
MAILDIR_ROOT=$dir/dovecot/mail
SUPPORT_USER=soporte@example.test
SUPPORT_PASSWORD=$support_password
CUSTOMER_USER=ana@example.test
CUSTOMER_PASSWORD=$customer_password
EOF
    fi
    load_env
    if ! { [ -f "$dir/dovecot/run/master.pid" ] && kill -0 "$(cat "$dir/dovecot/run/master.pid")" 2>/dev/null; }; then
      dovecot_start
    fi
    postfix -c "$dir/postfix/etc" status >/dev/null 2>&1 || postfix_start
    cat "$dir/env"
    ;;
  stop)
    if [ -f "$dir/env" ]; then
      load_env
      postfix_stop
      dovecot_stop
    fi
    rm -rf "$dir/dovecot" "$dir/postfix" "$dir/tls" "$dir/env"
    ;;
  stop-dovecot)
    load_env
    dovecot_stop
    ;;
  start-dovecot)
    load_env
    dovecot_start
    ;;
  kick)
    kicked=0
    as_dovecot doveadm -c "$dir/dovecot/dovecot.conf" kick "${3:?usage: servers.sh kick DIR USER}" >/dev/null ||
      kicked=$?
    # 68 (EX_NOUSER): USER had no session open.
    [ "$kicked" -eq 0 ] || [ "$kicked" -eq 68 ]
    ;;
  *)
    echo "servers.sh: unknown command $command" >&2
    exit 2
    ;;
esac
