#!/bin/sh
# Runs once, when the PostgreSQL volume is first initialised: creates the login Grafana uses. The
# hub's first migration finds kalypso_reader and grants it SELECT on the reporting views.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  --set=password="$KALYPSO_READER_PASSWORD" <<'SQL'
CREATE ROLE kalypso_reader LOGIN PASSWORD :'password';
SQL
