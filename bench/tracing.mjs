// `--tracing`: the service a second time with tracing on (target `traced`), exporting every span
// (100 % sampling, OTLP http/protobuf as deployed) to an in-process sink that answers like a
// Collector, and a table of what that costs per request beside the untraced service.
import { startOtlpReceiver } from '../scripts/lib/otlp-receiver.mjs';
import { fmt, ratio, table } from './format.mjs';
import { summarize } from './report.mjs';

/** Starts the sink; returns the environment of the traced service and the sink's counters. */
export async function tracingSink(cleanups) {
  const receiver = await startOtlpReceiver();
  cleanups.push(() => receiver.close());
  return {
    stats: receiver.stats,
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      // Every request is a root here (no traceparent): the default sampler keeps all of them too.
      OTEL_TRACES_SAMPLER: 'always_on',
    },
  };
}

const times = (value) => (value === null ? '–' : `${value.toFixed(2)}×`);

/** Markdown: req/s, p99 and app CPU per request of `service` and `traced`, per endpoint. */
export function tracingTable(list, results, stats) {
  const rows = list
    .filter((endpoint) => results.traced?.[endpoint.key] && results.service?.[endpoint.key])
    .map((endpoint) => {
      const off = summarize(results.service[endpoint.key]);
      const on = summarize(results.traced[endpoint.key]);
      const cpuOff = off.cpuUs?.app;
      const cpuOn = on.cpuUs?.app;
      return [
        `\`${endpoint.name}\``,
        `${fmt(off.rps, 0)} → ${fmt(on.rps, 0)}`,
        times(ratio(on.rps, off.rps)),
        `${fmt(off.p99Ms, 2)} → ${fmt(on.p99Ms, 2)}`,
        `${fmt(cpuOff, 0)} → ${fmt(cpuOn, 0)}`,
        cpuOff === undefined || cpuOn === undefined ? '–' : `+${fmt(cpuOn - cpuOff, 0)}`,
      ];
    });
  return (
    table(
      [
        'endpoint',
        'req/s: off → on',
        'on ÷ off',
        'p99 ms: off → on',
        'app CPU µs/req: off → on',
        'tracing µs/req',
      ],
      rows,
    ) +
    `\n\nThe sink received ${stats.requests} OTLP export requests (${fmt(stats.bytes / 1e6, 1)} MB).`
  );
}
