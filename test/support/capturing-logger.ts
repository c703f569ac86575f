import { Writable } from 'node:stream';
import { pino } from 'pino';

/** A pino logger whose JSON lines the test can read. */
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
  const logger = pino(
    { level: 'debug', formatters: { level: (label) => ({ level: label }) } },
    stream,
  );
  const raw = () => chunks.join('');
  const lines = () =>
    raw()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { logger, lines, raw };
}
