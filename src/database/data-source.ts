import { DataSource } from 'typeorm';
import { AppConfig, loadEnv } from '../config/app-config.js';
import { dataSourceOptions } from './database-options.js';

// The TypeORM CLI (`npm run migration:run`, `typeorm -d dist/src/database/data-source.js`) loads
// this module's default export. It uses the same settings as the service, from DATABASE_URL.
function cliDataSource(): DataSource {
  const env = loadEnv();
  if (!env.DATABASE_URL) {
    throw new Error('DATABASE_URL must be set for the TypeORM CLI (npm run migration:*)');
  }
  // A migration may rewrite a large table: the service's per-query statement_timeout does not apply.
  const database = { ...AppConfig.fromEnv(env).database, statementTimeoutMs: 0 };
  return new DataSource(dataSourceOptions(database));
}

export default cliDataSource();
