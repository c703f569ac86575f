// `npm start`: builds the service when needed, loads .env when present, then runs the built
// service in this process (so it receives signals itself).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { buildIfNeeded, entry, root } from './build-if-needed.mjs';

buildIfNeeded();
const envFile = path.join(root, '.env');
if (existsSync(envFile)) process.loadEnvFile(envFile);
process.chdir(root);
await import(entry);
