// gRPC load from h2load (Debian package `nghttp2-client`), the default for GetUser when it is
// installed: a C load generator leaves the two shared cores to the servers, where the grpc-js
// client of grpc.mjs costs about as much CPU per call as the server it measures. h2load sends a
// gRPC call as it is on the wire (a POST to /users.Users/GetUser with `content-type:
// application/grpc`, `te: trailers` and one length-prefixed GetUserRequest), `connections` calls
// in flight on one HTTP/2 connection (as a grpc-js channel holds), for a fixed time; the spikes of
// `--overload` open several connections (`clients`).
//
// h2load reads no trailers, so it cannot see a call's grpc-status. Before each run the same
// request goes once through `nghttp` (the same package), and the run is refused unless that
// answer carries `grpc-status: 0` and a message; h2load then counts every non-200 answer and
// every failed stream as an error. Every request carries the same id (h2load sends one body).
// Latencies come from h2load's per-request log (--log-file), percentiles by nearest rank.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Samples } from '../../scripts/lib/measure.mjs';
import { findTool } from '../../scripts/lib/system-tools.mjs';
import { runToEnd } from './run-to-end.mjs';

const METHOD_PATH = '/users.Users/GetUser';
const HEADERS = ['content-type: application/grpc', 'te: trailers'];

/** The h2load binary (with nghttp beside it, for the check before each run), or undefined. */
export function findH2load() {
  return findTool('nghttp') && findTool('h2load');
}

/** A GetUserRequest { id } as one gRPC message: flag 0, a 4-byte length, the protobuf bytes. */
export function getUserFrame(id) {
  const varint = [];
  for (let rest = id >>> 0; ; rest >>>= 7) {
    if (rest < 0x80) {
      varint.push(rest);
      break;
    }
    varint.push((rest & 0x7f) | 0x80);
  }
  const message = Buffer.from([0x08, ...varint]); // field 1, varint
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return frame;
}

/** Sends the call once through nghttp and throws unless it answered grpc-status 0 with a message. */
function checkCall(url, bodyFile) {
  const args = ['-v', '-d', bodyFile, ...HEADERS.flatMap((h) => ['-H', h]), url];
  const output = execFileSync('nghttp', args, { encoding: 'utf8', timeout: 10_000 });
  const status = /grpc-status: (\d+)/.exec(output)?.[1];
  const data = /recv DATA frame <length=(\d+)/.exec(output)?.[1];
  if (status !== '0' || !(Number(data) > 5)) {
    throw new Error(`GetUser through nghttp did not answer OK:\n${output.slice(-2000)}`);
  }
}

/**
 * One h2load run of GetUser against `address` (127.0.0.1 only) for `durationMs`, `connections`
 * calls in flight on each of `clients` connections, each call with a `grpc-timeout` of
 * `deadlineMs` if given. Resolves like runGrpcLoad: {count, errors, errorCodes, durationS, rps,
 * p50Ms, p90Ms, p99Ms, maxMs}, errorCodes keyed by HTTP status or `stream`, plus `within` (the
 * 200s answered within `goodMs`) and `started`. A run in which no call was answered throws,
 * unless `unansweredOk` (a spike beyond capacity).
 */
export async function h2loadGrpcLoad({
  address,
  connections = 50,
  clients = 1,
  durationMs = 10_000,
  id,
  goodMs = 250,
  deadlineMs,
  unansweredOk = false,
}) {
  const [host, port] = address.split(':');
  if (host !== '127.0.0.1') throw new Error(`refusing to load ${address}: not 127.0.0.1`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-h2load-'));
  try {
    const bodyFile = path.join(dir, 'request.bin');
    const logFile = path.join(dir, 'requests.log');
    fs.writeFileSync(bodyFile, getUserFrame(id));
    const url = `http://${host}:${port}${METHOD_PATH}`;
    checkCall(url, bodyFile);

    const durationS = Math.max(1, Math.round(durationMs / 1000));
    const args = [
      `-c${clients}`,
      `-m${connections}`,
      '-t1',
      `-D${durationS}`,
      '-d',
      bodyFile,
      ...HEADERS.flatMap((h) => ['-H', h]),
      ...(deadlineMs ? ['-H', `grpc-timeout: ${deadlineMs}m`] : []),
      '--log-file',
      logFile,
      url,
    ];
    const { exit, output } = await runToEnd('h2load', args, durationS);
    if (exit.code !== 0) {
      throw new Error(`h2load ${args.join(' ')} ended ${JSON.stringify(exit)}:\n${output}`);
    }

    const samples = new Samples();
    const errorCodes = {};
    let within = 0;
    let first = Infinity;
    let last = -Infinity;
    for (const line of fs.readFileSync(logFile, 'utf8').split('\n')) {
      if (!line) continue;
      const [startUs, status, elapsedUs] = line.split('\t').map(Number);
      if (status === 200) {
        samples.add(elapsedUs / 1000);
        if (elapsedUs <= goodMs * 1000) within++;
        first = Math.min(first, startUs);
        last = Math.max(last, startUs + elapsedUs);
      } else {
        const code = status > 0 ? String(status) : 'stream';
        errorCodes[code] = (errorCodes[code] ?? 0) + 1;
      }
    }
    const failedStreams = Number(/(\d+) failed, (\d+) errored/.exec(output)?.[1] ?? 0);
    const count = samples.length;
    const errors = Object.values(errorCodes).reduce((sum, n) => sum + n, 0);
    if (count === 0 && errors === 0 && failedStreams === 0 && !unansweredOk) {
      throw new Error(`h2load logged no request:\n${output}`);
    }
    const measuredS = count > 0 ? (last - first) / 1e6 : durationS;
    const [p50Ms, p90Ms, p99Ms, maxMs] = samples.percentiles(50, 90, 99, 100);
    return {
      count,
      errors: Math.max(errors, failedStreams),
      errorCodes,
      durationS: measuredS,
      rps: count / measuredS,
      p50Ms,
      p90Ms,
      p99Ms,
      maxMs,
      within,
      started: Number(/(\d+) started/.exec(output)?.[1] ?? NaN),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
