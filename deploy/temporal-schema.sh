#!/bin/sh
# One-shot run by docker-compose.yml before the Temporal server starts: creates Temporal's two PostgreSQL databases
# and brings their schemas up to the version this admin-tools image carries built in (`--schema-name`, no schema
# folder needed). The steps are those `npm run cluster` runs (schemaSteps in scripts/lib/cluster-config.ts;
# test/unit/compose.test.ts runs this script against a stand-in tool to keep them equal). Every step is idempotent
# (an existing database is accepted, setup-schema never lowers the version, update-schema applies only what is
# missing), so it runs on each `docker compose up` and doubles as the upgrade step when the image tags are raised.
# The password comes from SQL_PASSWORD, which the tool reads itself.
set -eu

sql_tool() {
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" "$@"
}

for pair in temporal:postgresql/v12/temporal temporal_visibility:postgresql/v12/visibility; do
  database=${pair%%:*}
  schema_name=${pair#*:}
  echo "schema: $database ($schema_name)"
  sql_tool --db "$database" create-database
  sql_tool --db "$database" setup-schema -v 0.0
  sql_tool --db "$database" update-schema --schema-name "$schema_name"
done
