#!/usr/bin/env bash
# Starts a throw-away PostgreSQL server on loopback for the tests, with TLS (a CA of its own, a certificate
# for localhost), and prints the environment lines that point the tests at it:
# SWITCHBACK_TEST_POSTGRES_URL=postgres://switchback@127.0.0.1:PORT/switchback, SWITCHBACK_TEST_POSTGRES_CA=DIR/ca.pem
# usage: scripts/postgres.sh up --dir DIR --port PORT | scripts/postgres.sh down --dir DIR
# Installs Debian's postgresql package when no server binaries are found. Runs the server as the
# `postgres` user when invoked as root (PostgreSQL refuses to run as root).
set -euo pipefail

log() { echo "postgres.sh: $*" >&2; }
action=${1:-}; shift || true
dir=""; port=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    *) log "unknown argument $1"; exit 2 ;;
  esac
done
[ -n "$dir" ] || { log "--dir is required"; exit 2; }

# Debian's versioned folder, else an initdb on PATH (Homebrew's postgresql on a Mac).
bindir() {
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
  if [ -n "$found" ] && [ -x "$found/initdb" ]; then echo "$found"; return 0; fi
  found=$(command -v initdb 2>/dev/null) || return 1
  dirname "$found"
}

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$action" in
  up)
    [ -n "$port" ] || { log "--port is required"; exit 2; }
    if ! bin=$(bindir); then
      log "installing postgresql"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >&2 || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >&2; }
      bin=$(bindir) || { log "no PostgreSQL server binaries after installing"; exit 1; }
    fi
    mkdir -p "$dir"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi
    as_owner "$bin/initdb" -D "$dir/data" -U switchback --auth=trust --encoding=UTF8 --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    # TLS as a deployment has it: a CA of its own and a server certificate for the name localhost only (no
    # IP address), so that verify-full by 127.0.0.1 must fail. Plain connections stay allowed on loopback.
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj "/CN=Switchback test CA" \
      -keyout "$dir/ca.key" -out "$dir/ca.pem" -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=localhost" -keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
    printf 'subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$dir/server.ext"
    openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 2 -extfile "$dir/server.ext" \
      -out "$dir/server.pem" 2>/dev/null
    chmod 600 "$dir/server.key"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$dir/server.key" "$dir/server.pem"; fi
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=400 -c ssl=on -c ssl_cert_file=$dir/server.pem -c ssl_key_file=$dir/server.key" \
      start >&2 || { cat "$dir/server.log" >&2; exit 1; }
    as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U switchback switchback >&2
    echo "SWITCHBACK_TEST_POSTGRES_URL=postgres://switchback@127.0.0.1:$port/switchback"
    echo "SWITCHBACK_TEST_POSTGRES_CA=$dir/ca.pem"
    ;;
  down)
    if bin=$(bindir) && [ -d "$dir/data" ]; then as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true; fi
    rm -rf "$dir"
    ;;
  *) log "usage: postgres.sh up --dir DIR --port PORT | down --dir DIR"; exit 2 ;;
esac
