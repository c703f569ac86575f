import { createRequire } from 'node:module';
import { pino, type Logger } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { activeSpan, traceFields, tracingEnabled } from './tracing.js';

/** Injection token of the service's root pino logger. */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

// Wherever these appear in a log object, their values are replaced.
const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers.cookie',
  'headers["x-api-key"]',
  'apiKeys',
  'password',
];

function prettyAvailable(): boolean {
  try {
    createRequire(import.meta.url).resolve('pino-pretty');
    return true;
  } catch {
    return false; // a dev dependency: absent from the production image
  }
}

/**
 * JSON lines on stdout; pretty output only when a person is watching a terminal (and never in
 * production). Level names, ISO timestamps and `service` on every line; with tracing on, also
 * `trace_id` and `span_id` of the span running when the line is written (no mixin when off, so
 * no cost per line).
 */
export function createRootLogger(config: Pick<AppConfig, 'logLevel' | 'production'>): Logger {
  const options: pino.LoggerOptions = {
    level: config.logLevel,
    base: { service: 'users-service' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    ...(tracingEnabled() && { mixin: () => traceFields(activeSpan()) }),
  };
  if (process.stdout.isTTY && !config.production && prettyAvailable()) {
    return pino({
      ...options,
      transport: {
        target: 'pino-pretty',
        options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l' },
      },
    });
  }
  // Asynchronous writes keep logging off the request path; each line still goes out at once.
  return pino(options, pino.destination({ dest: 1, sync: false }));
}
