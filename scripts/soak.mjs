// `npm run soak`: the built service under a bounded, fixed-rate load for a fixed time, mixed reads
// and writes over HTTP and gRPC, reporting errors, latency percentiles per interval and the
// service's memory (RSS and V8 heap) from start to end. Exits 1 on any error or on heap growth
// beyond --max-heap-growth-mb.
//
//   npm run soak                              300 s at 250 requests/s, a report every 10 s
//   npm run soak -- --duration 30             a quick run
//   options: --duration S --rate N --interval S --warmup S --users N --max-heap-growth-mb M
//            --skip-build
//
// Everything listens on 127.0.0.1. PostgreSQL is embedded (a throwaway cluster in a temp
// directory) unless SOAK_DATABASE_URL names a database whose name contains "soak" (its users and
// posts tables are emptied first).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { parseArgs } from 'node:util';
import { buildIfNeeded } from './build-if-needed.mjs';
import { cleanupOnExit } from './lib/cleanup.mjs';
import { runLoad } from './soak/load.mjs';
import { printInterval, summarize } from './soak/report.mjs';
import { seedUsers, startDatabase, startSoakService } from './soak/service.mjs';

const log = (...args) => console.log(...args);

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '300' },
    rate: { type: 'string', default: '250' },
    interval: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '10' },
    users: { type: 'string', default: '1000' },
    'max-heap-growth-mb': { type: 'string', default: '32' },
    'skip-build': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (args.help) {
  log(
    readFileSync(import.meta.filename, 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('//'))
      .map((line) => line.slice(3))
      .join('\n'),
  );
  process.exit(0);
}
const positive = (name) => {
  const n = Number(args[name]);
  if (!(Number.isFinite(n) && n > 0)) throw new Error(`--${name} must be a positive number`);
  return n;
};
const options = {
  durationS: positive('duration'),
  rate: positive('rate'),
  intervalS: positive('interval'),
  warmupS: Number(args.warmup) >= 0 ? Number(args.warmup) : 10,
  users: Math.round(positive('users')),
  maxHeapGrowthMb: positive('max-heap-growth-mb'),
};

// Clean-up of whatever was started, on success, on error and on Ctrl-C.
const { cleanups, cleanup } = cleanupOnExit({ what: 'the soak', log });
const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });

async function main() {
  if (!args['skip-build']) buildIfNeeded();
  log(
    `soak: ${options.rate} requests/s for ${options.durationS} s (after ${options.warmupS} s of ` +
      `warm-up), reports every ${options.intervalS} s`,
  );
  const databaseUrl = await startDatabase({ cleanups, log });
  const service = await startSoakService(databaseUrl, { cleanups, log });
  const userIds = await seedUsers(service, options.users, agent);
  log(`seeded ${userIds.length} users\n`);

  const run = await runLoad(service, userIds, {
    options,
    agent,
    onInterval: (interval) => printInterval(interval, { options, log }),
  });
  const exit = await service.stop();
  const failures = summarize({ ...run, exit }, { options, log });
  if (failures.length) {
    log(`\nFAILED: ${failures.join(', ')}`);
    if (exit.code !== 0) log(service.output().split('\n').slice(-20).join('\n'));
  } else {
    log('\nOK');
  }
  return failures.length ? 1 : 0;
}

let code = 1;
try {
  code = await main();
} catch (error) {
  log(error);
} finally {
  agent.destroy();
  await cleanup();
}
process.exit(code);
