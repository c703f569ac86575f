#!/bin/sh
# docker-compose.yml's PostgreSQL runs this once, on a fresh data volume, right after roles.sql
# (/docker-entrypoint-initdb.d runs its files in name order): the login roles' passwords, from the
# container's environment. psql quotes each :'variable' as a literal.
set -e
psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d "$POSTGRES_DB" \
  -v migrate_password="$USERS_MIGRATE_PASSWORD" -v app_password="$USERS_APP_PASSWORD" <<'SQL'
ALTER ROLE users_service_migrate PASSWORD :'migrate_password';
ALTER ROLE users_service_app PASSWORD :'app_password';
SQL
