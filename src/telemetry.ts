// Preloaded before the service: `node --import ./dist/src/telemetry.js dist/src/main.js` (the
// Dockerfile, `npm run start:prod`, scripts/start.mjs and the tests all start it so). Tracing can
// only instrument modules loaded after it starts, and Nest's imports load http, express, pg and
// @grpc/grpc-js, so this runs before main.ts and reads the OTEL_* variables through the same
// validateEnv as AppConfig (see src/config/app-config.ts). Without an endpoint it loads no SDK.
import { ConfigError } from './config/env.validation.js';
import { loadEnv } from './config/app-config.js';
import { startTracing, tracingSettings } from './observability/tracing.js';

try {
  await startTracing(tracingSettings(loadEnv()));
} catch (error) {
  // main.ts validates the same environment and stops the process, naming every bad variable.
  if (!(error instanceof ConfigError)) throw error;
}
