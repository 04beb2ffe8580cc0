#!/bin/sh
# One-shot run by docker-compose.yml before the Temporal server starts: creates Temporal's two PostgreSQL databases
# and brings their schemas up to the version this admin-tools image ships. Every step is idempotent (an existing
# database is accepted, setup-schema never lowers the version, update-schema applies only what is missing), so it
# runs on each `docker compose up` and doubles as the upgrade step when the image tags are raised.
set -eu

schemas=/etc/temporal/schema/postgresql/v12
sql_tool() {
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" "$@"
}

for pair in temporal:temporal temporal_visibility:visibility; do
  database=${pair%%:*}
  schema=${pair#*:}
  echo "schema: $database"
  sql_tool --db "$database" create
  sql_tool --db "$database" setup-schema -v 0.0
  sql_tool --db "$database" update-schema -d "$schemas/$schema/versioned"
done
