#!/bin/bash
# The point-in-time restore drill at a realistic size (docs/backup.md, "RPO and RTO"): a throwaway
# cluster of Debian's PostgreSQL 15 seeded with about 1.4 GB of incompressible rows, a full
# pgBackRest backup, 200,000 more rows (WAL to replay), a target time, 1,000 rows after it, the
# segment archived, the cluster lost (immediate stop), then a restore to the target into a new
# data directory, started, replayed and promoted. Prints each step's time and checks that every
# row before the target is back and none after it. Needs pgbackrest and postgresql-15 (Debian);
# run as root (it runs PostgreSQL as the postgres user) or as postgres. Listens on 127.0.0.1 only.
#
#   scripts/drill/restore-1gb.sh [ROWS]   (default 3,500,000 rows, about 1.4 GB)
set -euo pipefail
ROWS=${1:-3500000}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PORT=${DRILL_PORT:-5499}
RESTORED_PORT=$((PORT + 1))
B=$(mktemp -d /tmp/restore-drill-XXXXXX)
CONF=$B/pgbackrest.conf
mkdir -p "$B/repo" "$B/log"
as() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown -R postgres:postgres "$B"
ms() { date +%s%3N; }
cleanup() {
  as "$PGBIN/pg_ctl" -D "$B/data" -m immediate stop >/dev/null 2>&1 || true
  as "$PGBIN/pg_ctl" -D "$B/restored" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$B"
}
trap cleanup EXIT

as "$PGBIN/initdb" -D "$B/data" -U postgres --auth=trust >/dev/null
cat >"$CONF" <<CONF
[global]
repo1-path=$B/repo
repo1-retention-full=2
log-path=$B/log
lock-path=$B/log
spool-path=$B/log
process-max=2
compress-type=lz4
start-fast=y
[drill]
pg1-path=$B/data
pg1-port=$PORT
pg1-socket-path=$B
CONF
cat >>"$B/data/postgresql.conf" <<CONF
port = $PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '$B'
wal_level = replica
archive_mode = on
archive_command = 'pgbackrest --config=$CONF --stanza=drill archive-push %p'
archive_timeout = 60
max_wal_size = 4GB
CONF
[ "$(id -u)" = 0 ] && chown -R postgres:postgres "$B"
as "$PGBIN/pg_ctl" -D "$B/data" -l "$B/log/primary.log" -w start >/dev/null
as pgbackrest --config="$CONF" --stanza=drill stanza-create >/dev/null
sql() { psql -h 127.0.0.1 -p "$1" -U postgres -d postgres -qAtX -c "$2"; }

t0=$(ms)
sql "$PORT" "CREATE TABLE users (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text,
  email text, scim_attributes jsonb, created_at timestamptz DEFAULT now())"
sql "$PORT" "INSERT INTO users (name, email, scim_attributes)
  SELECT md5(random()::text) || md5(random()::text), md5(g::text) || '@example.com',
    jsonb_build_object('title', md5(random()::text) || md5(random()::text) || md5(random()::text),
      'department', md5(random()::text))
  FROM generate_series(1, $ROWS) g"
sql "$PORT" "CREATE UNIQUE INDEX ON users (lower(email))"
sql "$PORT" "CHECKPOINT"
echo "seeded $(($(sql "$PORT" "SELECT pg_database_size('postgres')") / 1048576)) MB in $((($(ms) - t0) / 1000)) s"

t0=$(ms)
as pgbackrest --config="$CONF" --stanza=drill --type=full backup
echo "full backup: $(($(ms) - t0)) ms"
as pgbackrest --config="$CONF" --stanza=drill info | grep -E "database size|backup set size"

sql "$PORT" "INSERT INTO users (name) SELECT 'after-backup ' || g FROM generate_series(1, 200000) g"
before=$(sql "$PORT" "SELECT count(*) FROM users")
target=$(sql "$PORT" "SELECT now()")
# The next rows commit strictly after the target.
until [ "$(sql "$PORT" "SELECT now() > '$target'::timestamptz")" = t ]; do :; done
sql "$PORT" "INSERT INTO users (name) SELECT 'after-target ' || g FROM generate_series(1, 1000) g"
t0=$(ms)
segment=$(sql "$PORT" "SELECT pg_walfile_name(pg_switch_wal())")
until [ "$(sql "$PORT" "SELECT last_archived_wal >= '$segment' FROM pg_stat_archiver")" = t ]; do
  sleep 0.05
done
echo "segment archived after pg_switch_wal: $(($(ms) - t0)) ms"
as "$PGBIN/pg_ctl" -D "$B/data" -m immediate stop >/dev/null

mkdir -p "$B/restored"
chmod 700 "$B/restored"
[ "$(id -u)" = 0 ] && chown postgres:postgres "$B/restored"
t0=$(ms)
as pgbackrest --config="$CONF" --stanza=drill --pg1-path="$B/restored" --type=time \
  "--target=$target" --target-action=promote restore
t1=$(ms)
echo "pgbackrest restore: $((t1 - t0)) ms"
sed -i "s/^port = $PORT/port = $RESTORED_PORT/; s/^archive_mode = on/archive_mode = off/" \
  "$B/restored/postgresql.conf"
as "$PGBIN/pg_ctl" -D "$B/restored" -l "$B/log/restored.log" -w -t 600 start >/dev/null
until [ "$(sql "$RESTORED_PORT" "SELECT NOT pg_is_in_recovery()")" = t ]; do sleep 0.05; done
t2=$(ms)
echo "start, replay to the target, promotion: $((t2 - t1)) ms"
echo "restore in total: $((t2 - t0)) ms"
after=$(sql "$RESTORED_PORT" "SELECT count(*) FROM users")
late=$(sql "$RESTORED_PORT" "SELECT count(*) FROM users WHERE name LIKE 'after-target %'")
echo "rows before the target: $before; restored: $after; rows after the target restored: $late"
[ "$after" = "$before" ] && [ "$late" = 0 ] || { echo 'the restore does not match the target' >&2; exit 1; }
