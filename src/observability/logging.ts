import { createRequire } from 'node:module';
import { type LogFn, pino, type Logger } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { chunkedStdout } from './chunked-stdout.js';
import { loggableError } from './loggable-error.js';
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

/** A log call's first argument, with the error it carries (itself, or its `err`) made loggable. */
function withLoggableError(first: unknown): unknown {
  if (first instanceof Error) return { err: loggableError(first) };
  if (typeof first === 'object' && first !== null && 'err' in first) {
    return { ...first, err: loggableError(first.err) };
  }
  return first;
}

/**
 * pino's `isoTime` (`,"time":"<ISO 8601>"`), formatted once per millisecond: `toISOString()` was
 * a third of pino's own work for a line, and under load many lines share a millisecond.
 */
export function isoTimeOncePerMs(): () => string {
  let at = Number.NaN;
  let field = '';
  return () => {
    const now = Date.now();
    if (now !== at) {
      at = now;
      field = `,"time":"${new Date(now).toISOString()}"`;
    }
    return field;
  };
}

/** The service's name on every line. */
const SERVICE_NAME = 'users-service';

/**
 * Level names, ISO timestamps, `service` and (from each call site) `context` on every line; with
 * tracing on, also `trace_id` and `span_id` of the span running when the line is written (no mixin
 * when off, so no cost per line). Every error a line carries is reduced to its loggable form
 * (loggableError: no query text, parameters or row data), under `err` and in the message pino
 * takes from it when the call gives none. Exported for the tests, which capture lines written
 * with exactly these settings.
 */
export function rootLoggerOptions(config: Pick<AppConfig, 'logLevel'>): pino.LoggerOptions {
  return {
    level: config.logLevel,
    base: { service: SERVICE_NAME },
    timestamp: isoTimeOncePerMs(),
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: { err: loggableError },
    hooks: {
      // pino writes an error's raw message as the line's message when the call gives none
      // (`logger.error(error)`, Nest's ExceptionHandler): hand it the loggable form instead.
      logMethod(args, method) {
        const first = withLoggableError(args[0]);
        if (first === args[0]) return method.apply(this, args);
        return method.apply(this, [first, ...args.slice(1)] as Parameters<LogFn>);
      },
    },
    ...(tracingEnabled() && { mixin: () => traceFields(activeSpan()) }),
  };
}

/**
 * JSON lines on stdout; pretty output only when a person is watching a terminal (and never in
 * production). main.ts makes the process's one root logger with this before anything else
 * runs, so the first line of a boot is written like the last.
 */
export function createRootLogger(config: Pick<AppConfig, 'logLevel' | 'production'>): Logger {
  const options = rootLoggerOptions(config);
  if (process.stdout.isTTY && !config.production && prettyAvailable()) {
    return pino({
      ...options,
      transport: {
        target: 'pino-pretty',
        options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l' },
      },
    });
  }
  // Chunks of lines written by a thread of their own keep logging off the request path
  // (ChunkedStdout): a line is handed over at most HOLD_MS after it was logged, and every line is
  // written before the process exits.
  return pino(options, chunkedStdout());
}

/**
 * An exception nothing caught, or a promise rejection nothing handled, would reach Node's own
 * handler, which prints the error with all its properties (a driver error's parameters among
 * them) outside the log schema. Logged here instead, in its loggable form, before the process exits
 * 1 as Node would have. main.ts installs it as soon as the root logger exists.
 */
export function logProcessFailures(
  logger: Logger,
  target: Pick<NodeJS.EventEmitter, 'on'> & { exit(code: number): void } = process,
): void {
  const fail = (what: string) => (error: unknown) => {
    logger.fatal({ context: 'Process', err: error }, what);
    target.exit(1);
  };
  target.on('uncaughtException', fail('uncaught exception'));
  target.on('unhandledRejection', fail('unhandled promise rejection'));
}
