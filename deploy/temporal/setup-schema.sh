#!/bin/sh
# One-shot, in temporalio/admin-tools: brings the schemas of Temporal's two databases to the
# version this admin-tools image ships, which is the server image's (same tag). In compose
# the databases exist already, owned by the temporal role this runs as (made by
# deploy/postgres/init-roles.sh; the role may not create databases); against a server
# where SQL_USER may, create-database makes them. Idempotent: a second run finds both at version
# and changes nothing. The password comes from SQL_PASSWORD (temporal-sql-tool reads it),
# never from the command line.
set -eu
: "${SQL_HOST:?set SQL_HOST}" "${SQL_USER:?set SQL_USER}" "${SQL_PASSWORD:?set SQL_PASSWORD}"
SQL_PORT=${SQL_PORT:-5432}

for db in temporal temporal_visibility; do
  case $db in
    temporal) dir=/etc/temporal/schema/postgresql/v12/temporal/versioned ;;
    *) dir=/etc/temporal/schema/postgresql/v12/visibility/versioned ;;
  esac
  sql() { temporal-sql-tool --plugin postgres12 --ep "$SQL_HOST" -p "$SQL_PORT" -u "$SQL_USER" --db "$db" "$@"; }
  # create-database fails when the database exists already (made by init-roles.sh, or on
  # a second start): not an error.
  sql create-database || echo "database $db exists"
  # setup-schema -v 0.0 only records version 0.0 where no version table exists yet;
  # update-schema then applies every versioned step past the recorded one.
  sql setup-schema -v 0.0 || echo "database $db has a schema version already"
  sql update-schema -d "$dir"
done
echo "Temporal schema is at the image's version"
