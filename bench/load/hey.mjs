// Closed-loop floods of `npm run bench -- --overload` from hey (Debian package `hey`): `callers`
// workers on GET /users/:id, each sending again as soon as it is answered, a 2 s timeout per
// request, for a fixed time. `-o csv` gives one line per answered request (response time and
// status), from which goodput (200s answered within `goodMs`) and the percentiles are computed.
// Timed-out requests are not in hey's CSV: their number is estimated from the callers' time not
// spent on answered requests (callers × duration − Σ response times) ÷ the timeout.
import { Samples } from '../../scripts/lib/measure.mjs';
import { findTool } from '../../scripts/lib/system-tools.mjs';
import { runToEnd } from './run-to-end.mjs';

const TIMEOUT_S = 2;

/** The hey binary, or undefined. */
export const findHey = () => findTool('hey');

/** Columns of hey's CSV: response-time (s), …, status-code, offset (s since the start). */
function parseCsv(text, goodMs) {
  const ok = new Samples();
  const shed = new Samples();
  const statuses = {};
  let good = 0;
  let answered = 0;
  let busyS = 0;
  for (const line of text.split('\n')) {
    const cells = line.split(',');
    if (cells.length < 8 || !/^[\d.]+$/.test(cells[0])) continue;
    const ms = Number(cells[0]) * 1000;
    const status = Number(cells[6]);
    answered++;
    busyS += ms / 1000;
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (status === 200) {
      ok.add(ms);
      if (ms <= goodMs) good++;
    } else if (status === 503) shed.add(ms);
  }
  return { ok, shed, statuses, good, answered, busyS };
}

/**
 * One flood of `callers` against `url` (127.0.0.1 only) for `durationS`. Resolves with
 * { answered, statuses, good, goodputPerS, okP50Ms, okP99Ms, shedP50Ms, shedP99Ms,
 * timeoutsEstimate }.
 */
export async function heyFlood({ url, callers, durationS, goodMs = 250 }) {
  if (new URL(url).hostname !== '127.0.0.1') throw new Error(`refusing to load ${url}`);
  const args = ['-c', String(callers), '-z', `${durationS}s`, '-t', String(TIMEOUT_S), '-o', 'csv'];
  const { exit, output } = await runToEnd('hey', [...args, url], durationS + TIMEOUT_S);
  if (exit.code !== 0) {
    throw new Error(`hey ${args.join(' ')} ended ${JSON.stringify(exit)}:\n${output.slice(-2000)}`);
  }
  const { ok, shed, statuses, good, answered, busyS } = parseCsv(output, goodMs);
  const [okP50Ms, okP99Ms] = ok.percentiles(50, 99);
  const [shedP50Ms, shedP99Ms] = shed.percentiles(50, 99);
  return {
    answered,
    statuses,
    good,
    goodputPerS: good / durationS,
    okP50Ms,
    okP99Ms,
    shedP50Ms,
    shedP99Ms,
    timeoutsEstimate: Math.max(0, Math.round((callers * durationS - busyS) / TIMEOUT_S)),
  };
}
