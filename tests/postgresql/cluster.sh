#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests: initdb + pg_ctl from Debian's postgresql
# package, on 127.0.0.1 at a free port, as an unprivileged user (the `postgres` account
# when run as root: initdb refuses root).
#
#   cluster.sh start DIR     create (first time) and start; prints the URI
#   cluster.sh stop DIR      stop (fast shutdown) and delete the data
#   cluster.sh restart DIR   stop and start the same data (a server restart mid-test)
#   cluster.sh kill DIR      SIGKILL the postmaster (a crash), then `start` brings it back
#   cluster.sh psql DIR ...  psql against it
#
# DIR (in the build tree) receives `uri` (postgresql://dispatchd@127.0.0.1:PORT/dispatchd:
# no password in it), `password` (the role's, as database_password_env would carry it),
# `port` and `data` (the path of the data folder). The data folder lives in a private
# folder under /tmp, so that the server's account can reach it whatever DIR's parents allow.
#
# fsync is off unless DISPATCHD_PG_FSYNC=on: a crash of the server process (kill) loses
# nothing with it off — the OS keeps the written pages —, only a crash of the machine would.
set -euo pipefail

command=${1:?usage: cluster.sh start|stop|restart|kill|psql DIR}
dir=${2:?usage: cluster.sh start|stop|restart|kill|psql DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  echo "cluster.sh: no PostgreSQL server (apt-get install postgresql; scripts/install-deps.sh does)" >&2
  exit 2
fi

# Runs a server command as the unprivileged account.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

data() { cat "$dir/data"; }
port() { cat "$dir/port"; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pg_start() {
  local data_dir
  data_dir=$(data)
  # pg_ctl's own chatter (a stale pid file after a kill) is noise; a failure shows the log.
  if ! as_owner "$bin/pg_ctl" -D "$data_dir/db" -l "$data_dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $(port) -k $data_dir -c fsync=${DISPATCHD_PG_FSYNC:-off}" start \
    >/dev/null 2>&1; then
    echo "cluster.sh: the server did not start; its log:" >&2
    tail -20 "$data_dir/server.log" >&2
    exit 1
  fi
}

case "$command" in
  start)
    if [ ! -f "$dir/data" ] || [ ! -d "$(data)/db" ]; then
      data_dir=$(mktemp -d /tmp/dispatchd-pg.XXXXXX)
      chmod 700 "$data_dir"
      [ "$(id -u)" -eq 0 ] && chown postgres: "$data_dir"
      echo "$data_dir" >"$dir/data"
      python3 -c 'import secrets; print(secrets.token_hex(16))' >"$dir/password"
      # The password file must be readable by the server's account while initdb runs.
      cp "$dir/password" "$data_dir/pwfile"
      [ "$(id -u)" -eq 0 ] && chown postgres: "$data_dir/pwfile"
      as_owner "$bin/initdb" -D "$data_dir/db" -U dispatchd --pwfile="$data_dir/pwfile" -E UTF8 --locale=C.UTF-8 \
        --auth-local=trust --auth-host=scram-sha-256 >"$data_dir/initdb.log"
      rm -f "$data_dir/pwfile"
      # Tests create a database each and run many connections (several instances, pools).
      echo "max_connections = 300" | as_owner tee -a "$data_dir/db/postgresql.conf" >/dev/null
      free_port >"$dir/port"
      pg_start
      as_owner "$bin/createdb" -h "$data_dir" -p "$(port)" -U dispatchd dispatchd
    elif ! as_owner "$bin/pg_ctl" -D "$(data)/db" status >/dev/null 2>&1; then
      pg_start
    fi
    echo "postgresql://dispatchd@127.0.0.1:$(port)/dispatchd" >"$dir/uri"
    cat "$dir/uri"
    ;;
  stop)
    if [ -f "$dir/data" ] && [ -d "$(data)" ]; then
      as_owner "$bin/pg_ctl" -D "$(data)/db" -m fast -w stop >/dev/null 2>&1 || true
      rm -rf "$(data)"
    fi
    rm -f "$dir/data" "$dir/uri" "$dir/port" "$dir/password"
    ;;
  restart)
    as_owner "$bin/pg_ctl" -D "$(data)/db" -m fast -w stop >/dev/null
    pg_start
    ;;
  kill)
    kill -KILL "$(head -1 "$(data)/db/postmaster.pid")"
    # The backends notice their postmaster is gone and exit; wait for the port to free.
    for _ in $(seq 100); do
      as_owner "$bin/pg_ctl" -D "$(data)/db" status >/dev/null 2>&1 || break
      sleep 0.1
    done
    ;;
  psql)
    shift 2
    PGPASSWORD=$(cat "$dir/password") psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$(port)" -U dispatchd dispatchd "$@"
    ;;
  *)
    echo "cluster.sh: unknown command $command" >&2
    exit 2
    ;;
esac
