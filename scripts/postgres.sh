#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests: one cluster per checkout, on 127.0.0.1, with a
# role and a database for the tests. Its data lives under $ADKCTX_PG_DIR and is removed by stop.
#
#   scripts/postgres.sh start   install PostgreSQL if missing (Debian package, needs root), create
#                               and start the cluster, print the DSN; a running one is reused
#   scripts/postgres.sh dsn     print the DSN of the running cluster
#   scripts/postgres.sh status  say whether it runs
#   scripts/postgres.sh stop    stop it and remove its data (no-op when not running)
#
# Use: export ADKCTX_POSTGRES_DSN="$(scripts/postgres.sh start)"
# Only the DSN goes to stdout; progress and errors go to stderr.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd -P)
# One cluster per checkout, so worktrees on one machine do not share a server.
state=${ADKCTX_PG_DIR:-${TMPDIR:-/tmp}/adkctx-postgres-$(id -u)-$(printf %s "$repo" | cksum | cut -d' ' -f1)}
data=$state/data
sock=$state/sock
role=adkctx
dbname=adkctx

log() { echo "postgres.sh: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}

# PostgreSQL refuses to run as root: as root the server runs as the package's postgres user.
if [[ $(id -u) == 0 ]]; then
  owner=postgres
else
  owner=$(id -un)
fi
# fd 9 holds the lock: the server must not inherit it, or it would hold the lock for life.
as_owner() {
  if [[ $(id -u) == 0 ]]; then
    runuser -u "$owner" -- "$@" 9>&-
  else
    "$@" 9>&-
  fi
}

# The newest installed server, or $ADKCTX_PG_BIN. psql alone (postgresql-client) is not enough.
find_bin() {
  if [[ -n ${ADKCTX_PG_BIN:-} ]]; then
    [[ -x $ADKCTX_PG_BIN/initdb ]] || die "ADKCTX_PG_BIN=$ADKCTX_PG_BIN has no initdb"
    echo "$ADKCTX_PG_BIN"
    return
  fi
  local d
  d=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
  if [[ -n $d && -x $d/initdb && -x $d/pg_ctl && -x $d/postgres ]]; then
    echo "$d"
  fi
}

install_server() {
  [[ $(id -u) == 0 ]] || die "PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin/initdb); install them as root: apt-get install -y postgresql"
  command -v apt-get >/dev/null || die "PostgreSQL server binaries not found and apt-get is missing: install PostgreSQL and set ADKCTX_PG_BIN to its bin directory"
  log "installing PostgreSQL (apt-get install postgresql)"
  export DEBIAN_FRONTEND=noninteractive
  # A fresh machine has no package lists yet.
  local policy
  policy=$(apt-cache policy postgresql 2>/dev/null || true)
  if [[ $policy != *"Candidate: "[0-9]* ]]; then
    apt-get update -qq >&2 || die "apt-get update failed"
  fi
  if ! apt-get install -y -qq --no-install-recommends postgresql >&2; then
    log "retrying after apt-get update (the package lists may be stale)"
    apt-get update -qq >&2 || die "apt-get update failed"
    apt-get install -y -qq --no-install-recommends postgresql >&2 || die "apt-get install postgresql failed"
  fi
}

# Running and accepting connections (a postmaster killed a moment ago can still look alive).
running() {
  local bin=$1
  [[ -f $data/PG_VERSION && -s $state/port ]] &&
    as_owner "$bin/pg_ctl" status -D "$data" >/dev/null 2>&1 &&
    "$bin/pg_isready" -q -h 127.0.0.1 -p "$(cat "$state/port")" -t 5 9>&-
}

# True when something accepts connections on 127.0.0.1:$1.
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Runs SQL as the cluster's superuser over the unix socket (peer authentication).
psql_admin() {
  as_owner "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$sock" -p "$(cat "$state/port")" -U "$owner" -d postgres
}

start() {
  bin=$(find_bin)
  if [[ -z $bin ]]; then
    install_server
    bin=$(find_bin)
    [[ -n $bin ]] || die "apt-get install postgresql did not install /usr/lib/postgresql/*/bin/initdb"
  fi
  if [[ $(id -u) == 0 ]] && ! id "$owner" >/dev/null 2>&1; then
    die "user $owner does not exist (the Debian postgresql package creates it); PostgreSQL will not run as root"
  fi

  if running "$bin" && [[ -s $state/dsn ]]; then
    log "reusing the server in $state"
    cat "$state/dsn"
    return
  fi
  # A cluster left stopped (or half made) is thrown away: nothing in it is worth keeping.
  if [[ -d $state ]]; then
    if [[ -f $data/postmaster.pid ]]; then
      as_owner "$bin/pg_ctl" stop -D "$data" -m immediate >/dev/null 2>&1 || true
    fi
    rm -rf "$state"
  fi

  mkdir -p "$state" "$sock"
  chmod 700 "$state"
  [[ $(id -u) == 0 ]] && chown -R "$owner:" "$state"
  cd "$state" # the owner may not be able to read the caller's directory

  log "initdb ($bin) in $data"
  as_owner "$bin/initdb" -D "$data" -U "$owner" -E UTF8 --no-locale --no-sync \
    --auth-local=peer --auth-host=scram-sha-256 >"$state/initdb.log" 2>&1 ||
    die "initdb failed: $(tail -n 20 "$state/initdb.log")"
  # Throwaway data: trade durability for speed (CREATE DATABASE per test).
  as_owner tee -a "$data/postgresql.conf" >/dev/null <<EOF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$sock'
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
EOF

  # A port derived from the path, then the next ones; a port taken between the check and the
  # bind fails the start, so that is retried too.
  local base=$((20000 + $(printf %s "$state" | cksum | cut -d' ' -f1) % 20000)) port='' p i
  for ((i = 0; i < 50; i++)); do
    p=$((base + i))
    port_taken "$p" && continue
    rm -f "$state/server.log"
    if as_owner "$bin/pg_ctl" start -D "$data" -w -t 60 -l "$state/server.log" -o "-p $p" >/dev/null 2>&1; then
      port=$p
      break
    fi
    grep -q 'could not bind\|Address already in use' "$state/server.log" 2>/dev/null ||
      die "the server did not start: $(tail -n 20 "$state/server.log" 2>/dev/null)"
  done
  [[ -n $port ]] || die "no free port in $base..$((base + 49))"
  echo "$port" >"$state/port"

  local password
  password=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
  psql_admin <<EOF
CREATE ROLE $role LOGIN CREATEDB PASSWORD '$password';
CREATE DATABASE $dbname OWNER $role;
-- DROP DATABASE ... WITH (FORCE) in the tests' cleanup ends any backend still in the database,
-- an autovacuum worker too; without this grant that fails for a role that is not a superuser.
GRANT pg_signal_backend TO $role;
EOF
  (
    umask 077
    echo "postgres://$role:$password@127.0.0.1:$port/$dbname?sslmode=disable" >"$state/dsn"
  )
  log "PostgreSQL $(as_owner "$bin/postgres" -V | awk '{print $3}') on 127.0.0.1:$port (user $owner, data $data)"
  cat "$state/dsn"
}

stop() {
  bin=$(find_bin)
  if [[ -n $bin ]] && [[ -f $data/postmaster.pid ]]; then
    cd /
    as_owner "$bin/pg_ctl" stop -D "$data" -m fast -w -t 60 >/dev/null 2>&1 ||
      as_owner "$bin/pg_ctl" stop -D "$data" -m immediate >/dev/null 2>&1 || true
    log "stopped the server in $state"
  fi
  rm -rf "$state"
}

cmd=${1:-start}
case $cmd in
  start | stop)
    # One start or stop at a time per checkout.
    exec 9>"$state.lock"
    flock 9
    "$cmd"
    ;;
  dsn)
    bin=$(find_bin)
    if [[ -z $bin ]] || ! running "$bin" || [[ ! -s $state/dsn ]]; then
      die "no server running; run: scripts/postgres.sh start"
    fi
    cat "$state/dsn"
    ;;
  status)
    bin=$(find_bin)
    if [[ -n $bin ]] && running "$bin"; then
      echo "running in $state on 127.0.0.1:$(cat "$state/port")"
    else
      echo "not running"
      exit 3
    fi
    ;;
  *) die "usage: $0 start|stop|dsn|status" ;;
esac
