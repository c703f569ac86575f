#!/bin/sh
# The newest backups of a pgBackRest stanza as Prometheus metrics, for node_exporter's textfile
# collector on the repository host: read from `pgbackrest info --output=json`, so they say what
# the repository holds (after expiry, a failed run, a backup started by hand), not what a job
# reported. UsersServiceBackupTooOld (monitoring/alerts.yaml) alerts on them; pgbackrest.cron runs
# this after every backup and every 15 minutes (docs/backup.md, "Backup age").
#
#   pgbackrest-metrics.sh [stanza] [textfile directory]
#
# Defaults: stanza `users`, Debian's node_exporter directory /var/lib/prometheus/node-exporter.
# Needs pgbackrest (PGBACKREST names another binary) and jq. Writes <dir>/pgbackrest-<stanza>.prom
# in one rename, so node_exporter never reads half a file. When `pgbackrest info` fails the
# previous file stays as it was and the script exits non-zero: the ages it holds keep growing.
set -eu

stanza=${1:-users}
dir=${2:-/var/lib/prometheus/node-exporter}
file="$dir/pgbackrest-$stanza.prom"
# node_exporter reads *.prom only: the file being written is not one.
tmp="$file.$$.tmp"
trap 'rm -f "$tmp"' EXIT

info=$("${PGBACKREST:-pgbackrest}" --stanza="$stanza" --output=json info)
printf '%s\n' "$info" | jq -r --arg stanza "$stanza" --arg now "$(date +%s)" '
  (map(select(.name == $stanza)) | first
    // error("stanza \($stanza) is not in pgbackrest info")) as $s
  | "{stanza=\"\($stanza)\"" as $l
  | "# HELP pgbackrest_backup_last_stop_timestamp_seconds When the newest backup of each type (full, diff, incr) in the repository ended, Unix time.",
    "# TYPE pgbackrest_backup_last_stop_timestamp_seconds gauge",
    ($s.backup | group_by(.type)[]
      | "pgbackrest_backup_last_stop_timestamp_seconds\($l),type=\"\(.[0].type)\"} \(map(.timestamp.stop) | max)"),
    "# HELP pgbackrest_stanza_status_code The status code of the stanza in pgbackrest info: 0 ok, 1 missing stanza path, 2 no valid backups, others in its status message.",
    "# TYPE pgbackrest_stanza_status_code gauge",
    "pgbackrest_stanza_status_code\($l)} \($s.status.code)",
    "# HELP pgbackrest_metrics_written_timestamp_seconds When this file was last written, Unix time.",
    "# TYPE pgbackrest_metrics_written_timestamp_seconds gauge",
    "pgbackrest_metrics_written_timestamp_seconds\($l)} \($now)"
' >"$tmp"
mv "$tmp" "$file"
