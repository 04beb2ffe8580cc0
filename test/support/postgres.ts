// The throw-away PostgreSQL server lives with the scripts (npm run cluster starts one too); tests import it here.
export { startPostgres, type PostgresServer, type StartPostgresOptions } from '../../scripts/lib/postgres-server';
