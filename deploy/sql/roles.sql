-- The users service's database roles (docs/deploying.md, "Database roles"). A DBA runs this once,
-- before the service's migrations first run: as a superuser (or a managed service's admin role),
-- connected to the service's database, e.g. `psql -d users -v ON_ERROR_STOP=1 -f roles.sql`.
-- Running it again changes nothing.
--
--   users_service_migrate  LOGIN    owns the schema and everything the migrations create in it;
--                                   `npm run migration:run`, the Kubernetes migration Job.
--   users_service_runtime  NOLOGIN  a group: the privileges the service's statements need, which
--                                   the migrations grant it table by table
--                                   (migrations/runtime-role.ts). No DDL, no TRUNCATE, no
--                                   ownership. The one role name the code knows.
--   users_service_app      LOGIN    the service itself (the Deployment's DATABASE_URL, and its
--                                   replicas'), a member of users_service_runtime, owning nothing.
--   users_service_operator LOGIN    people on call running the runbooks' psql commands
--                                   (docs/monitoring.md): pg_monitor's statistics and settings,
--                                   read-only, no table of the service. Never the service's identity.
--
-- The login names are yours to choose: rename them here and in the Secrets. No password is set
-- here, so none is kept in a file; set them in psql, which sends only a hash:
--   \password users_service_migrate
--   \password users_service_app
--   \password users_service_operator

DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'users_service_runtime') THEN
    CREATE ROLE users_service_runtime NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'users_service_migrate') THEN
    CREATE ROLE users_service_migrate LOGIN;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'users_service_app') THEN
    CREATE ROLE users_service_app LOGIN;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'users_service_operator') THEN
    CREATE ROLE users_service_operator LOGIN;
  END IF;
END $$;

-- The service logs in as a member of the group and inherits its privileges.
GRANT users_service_runtime TO users_service_app;

-- A statement the service gave up on (past DB_STATEMENT_TIMEOUT_MS, it closes the connection of a
-- write rather than cancel it) stops on the server within a second, unless it is a commit waiting
-- for the synchronous standby, which PostgreSQL never interrupts this way (docs/failover.md). And
-- never a statement_timeout for these roles: it would cut such a commit's wait short.
ALTER ROLE users_service_app SET client_connection_check_interval = '1s';
ALTER ROLE users_service_app RESET statement_timeout;
ALTER ROLE users_service_migrate RESET statement_timeout;

-- The change feed's metric of a transaction holding the feed back
-- (user_changes_blocking_transaction_age_seconds, and its alert) sees the transactions of other
-- roles (the migration Job, an operator's psql, a report) only with this: pg_stat_activity hides
-- their xact_start otherwise. It reads statistics, no data (docs/events.md).
GRANT pg_read_all_stats TO users_service_app;

-- The operator sees what the runbooks ask (every session, replication lag, settings) and
-- changes nothing: read-only transactions, a statement timeout, and no privilege on the tables.
GRANT pg_monitor TO users_service_operator;
ALTER ROLE users_service_operator SET default_transaction_read_only = on;
ALTER ROLE users_service_operator SET statement_timeout = '30s';
-- Their share of max_connections (k8s/base/config.env has the whole budget).
ALTER ROLE users_service_operator CONNECTION LIMIT 5;
-- Every statement an operator runs is in the server's log, under the role's name (with the
-- server's log_connections and a log_line_prefix naming user and application: docs/deploying.md,
-- "Auditing the operator role"). Setting it needs a superuser: a managed service's admin role may
-- be refused, which is reported and left to pgaudit or the provider's audit log.
DO $$
BEGIN
  ALTER ROLE users_service_operator SET log_statement = 'all';
EXCEPTION WHEN insufficient_privilege THEN
  RAISE WARNING 'log_statement not set for users_service_operator (%): audit its sessions with pgaudit or the provider''s audit log', SQLERRM;
END $$;

-- The migration role owns the schema, so the tables, functions and triggers its migrations
-- create are its own, and it alone grants on them. Nobody else creates objects in it (before
-- PostgreSQL 15, every role could create in `public`).
ALTER SCHEMA public OWNER TO users_service_migrate;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;

-- The three may connect; no role of this database makes temporary tables (the service needs none,
-- and a temporary table could shadow a real one for a function without a fixed search_path).
DO $$
BEGIN
  EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
  EXECUTE format('GRANT CONNECT ON DATABASE %I TO users_service_migrate, users_service_runtime, '
    'users_service_operator', current_database());
END $$;

-- Default privileges of what the migration role creates. Functions: PostgreSQL lets every role
-- execute a new function; the service calls none of them directly (triggers run without it), so
-- nobody does. Tables and sequences: no default grants on purpose. Each migration grants the
-- runtime role what the service needs of the table it creates (often less than all of SELECT,
-- INSERT, UPDATE, DELETE), which a default privilege granting everything would undo.
ALTER DEFAULT PRIVILEGES FOR ROLE users_service_migrate REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;
