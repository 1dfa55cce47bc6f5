#!/bin/sh
# Creates Temporal's two databases (default store and SQL visibility) if they are missing and brings
# their schemas to the server's version with the server's own SQL tool (temporal-sql-tool, from
# go.temporal.io/server cmd/tools/sql; schemas embedded in it). Safe to run on every start: an existing
# database is kept, a current schema is left as it is.
# Used by docker-compose.yml (the temporal-schema service) and `npm run stack:cluster`.
# Reads: DB, DBNAME, VISIBILITY_DBNAME (deploy/temporal/cluster.env) and POSTGRES_SEEDS, DB_PORT,
# POSTGRES_USER, POSTGRES_PWD (the environment's own); the password goes to the tool by environment.
set -eu
: "${DB:?set DB (deploy/temporal/cluster.env)}" "${DBNAME:?set DBNAME}" "${VISIBILITY_DBNAME:?set VISIBILITY_DBNAME}"
: "${POSTGRES_SEEDS:?set POSTGRES_SEEDS to the PostgreSQL host}" "${DB_PORT:?set DB_PORT}" "${POSTGRES_USER:?set POSTGRES_USER}"
export SQL_PLUGIN="$DB" SQL_HOST="$POSTGRES_SEEDS" SQL_PORT="$DB_PORT" SQL_USER="$POSTGRES_USER" SQL_PASSWORD="${POSTGRES_PWD:-}"
SQL_TOOL="${TEMPORAL_SQL_TOOL:-temporal-sql-tool}"

setup() { # database, embedded schema name
  if out=$("$SQL_TOOL" --db "$1" create-database --defaultdb postgres 2>&1); then
    echo "created database $1"
  else
    case "$out" in
      *"already exists"*) echo "database $1 exists" ;;
      *) echo "$out" >&2; echo "could not create database $1" >&2; exit 1 ;;
    esac
  fi
  "$SQL_TOOL" --quiet --db "$1" setup-schema -v 0.0
  "$SQL_TOOL" --quiet --db "$1" update-schema --schema-name "$2"
  echo "schema of $1 is current ($2)"
}

setup "$DBNAME" postgresql/v12/temporal
setup "$VISIBILITY_DBNAME" postgresql/v12/visibility
