import { Writable } from 'node:stream';
import { pino } from 'pino';
import { rootLoggerOptions } from '../../src/observability/logging.js';

/**
 * A pino logger with the service's own settings (schema, redaction, the loggable form of errors)
 * at level debug, whose JSON lines the test can read.
 */
export function capturingLogger(): {
  logger: pino.Logger;
  lines: () => Record<string, unknown>[];
  raw: () => string;
} {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const logger = pino(rootLoggerOptions({ logLevel: 'debug' }), stream);
  const raw = () => chunks.join('');
  const lines = () =>
    raw()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { logger, lines, raw };
}
