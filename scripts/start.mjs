// `npm start`: builds the service when needed, loads .env when present, then runs the built
// service in this process (so it receives signals itself), telemetry.js first, as
// `node --import ./dist/src/telemetry.js dist/src/main.js` does: after .env, whose OTEL_*
// variables it reads, and before main.js loads the modules it instruments.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { buildIfNeeded, entry, root, telemetryEntry } from './build-if-needed.mjs';

buildIfNeeded();
const envFile = path.join(root, '.env');
if (existsSync(envFile)) process.loadEnvFile(envFile);
process.chdir(root);
await import(telemetryEntry);
await import(entry);
