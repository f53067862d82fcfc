#!/bin/sh
# Run once by the postgres image, on the first start of an empty data directory, as its
# superuser (docker-compose.yml mounts this folder at /docker-entrypoint-initdb.d). Makes
# one role per system, each owning only its own databases, so neither the agentrt store
# nor Temporal runs as the superuser, and neither can connect to the other's databases:
#   agentrt  (PG_AGENTRT_PASSWORD)   owns agentrt
#   temporal (PG_TEMPORAL_PASSWORD)  owns temporal and temporal_visibility
# Neither may create databases or roles. The passwords come from the environment and are
# read inside psql (\getenv), never put on a command line. tests/test_docker_compose.py
# runs this very script against a real PostgreSQL.
set -eu
: "${PG_AGENTRT_PASSWORD:?set PG_AGENTRT_PASSWORD}" "${PG_TEMPORAL_PASSWORD:?set PG_TEMPORAL_PASSWORD}"
export PG_AGENTRT_ROLE="${PG_AGENTRT_ROLE:-agentrt}" PG_AGENTRT_DB="${PG_AGENTRT_DB:-agentrt}"
export PG_TEMPORAL_ROLE="${PG_TEMPORAL_ROLE:-temporal}" PG_TEMPORAL_DB="${PG_TEMPORAL_DB:-temporal}"
export PG_VISIBILITY_DB="${PG_VISIBILITY_DB:-temporal_visibility}"

psql -v ON_ERROR_STOP=1 --no-psqlrc --username "${POSTGRES_USER:-postgres}" --dbname postgres <<'SQL'
\getenv agentrt_role PG_AGENTRT_ROLE
\getenv agentrt_password PG_AGENTRT_PASSWORD
\getenv agentrt_db PG_AGENTRT_DB
\getenv temporal_role PG_TEMPORAL_ROLE
\getenv temporal_password PG_TEMPORAL_PASSWORD
\getenv temporal_db PG_TEMPORAL_DB
\getenv visibility_db PG_VISIBILITY_DB
CREATE ROLE :"agentrt_role" LOGIN PASSWORD :'agentrt_password' NOSUPERUSER NOCREATEDB NOCREATEROLE;
CREATE ROLE :"temporal_role" LOGIN PASSWORD :'temporal_password' NOSUPERUSER NOCREATEDB NOCREATEROLE;
CREATE DATABASE :"agentrt_db" OWNER :"agentrt_role";
CREATE DATABASE :"temporal_db" OWNER :"temporal_role";
CREATE DATABASE :"visibility_db" OWNER :"temporal_role";
-- Only a database's owner (and the superuser) may connect to it.
REVOKE ALL ON DATABASE :"agentrt_db" FROM PUBLIC;
REVOKE ALL ON DATABASE :"temporal_db" FROM PUBLIC;
REVOKE ALL ON DATABASE :"visibility_db" FROM PUBLIC;
SQL
echo "roles $PG_AGENTRT_ROLE and $PG_TEMPORAL_ROLE ready"
