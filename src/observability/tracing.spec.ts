import { ConfigError, validateEnv } from '../config/env.validation.js';
import { createPropagator, tracingSettings } from './tracing.js';

const settings = (env: Record<string, string>) => tracingSettings(validateEnv(env));

describe(tracingSettings.name, () => {
  it('is off without an endpoint, and when one is empty', () => {
    expect(settings({})).toMatchObject({
      enabled: false,
      description: 'off (no OTEL_EXPORTER_OTLP_ENDPOINT)',
    });
    expect(settings({ OTEL_EXPORTER_OTLP_ENDPOINT: '' }).enabled).toBe(false);
  });

  it('is on with either endpoint, with the standard defaults', () => {
    expect(settings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toEqual({
      enabled: true,
      serviceName: 'users-service',
      protocol: 'http/protobuf',
      propagators: ['tracecontext', 'baggage'],
      description:
        'on, OTLP http/protobuf to http://collector:4318/v1/traces (sampler parentbased_always_on, propagators tracecontext,baggage)',
    });
    expect(
      settings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://vendor.example/otlp/traces' }),
    ).toMatchObject({ enabled: true, description: expect.stringContaining('vendor.example') });
  });

  it('is off when OTEL_SDK_DISABLED is true, whatever its case', () => {
    expect(
      settings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'TRUE' }),
    ).toMatchObject({ enabled: false, description: 'off (OTEL_SDK_DISABLED=true)' });
  });

  it('takes the service name and http/json from the environment', () => {
    expect(
      settings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_SERVICE_NAME: 'users-eu',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      }),
    ).toMatchObject({ serviceName: 'users-eu', protocol: 'http/json' });
  });

  it('uses a gRPC endpoint as it is, and lets the traces protocol override the general one', () => {
    expect(
      settings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      }),
    ).toMatchObject({
      protocol: 'grpc',
      description: expect.stringContaining('on, OTLP grpc to http://collector:4317 ('),
    });
    expect(
      settings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc',
      }).protocol,
    ).toBe('grpc');
  });

  it('reads OTEL_PROPAGATORS in order, without repeats; none alone propagates nothing', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(
      settings({ ...endpoint, OTEL_PROPAGATORS: ' b3multi, tracecontext,b3multi ,jaeger' })
        .propagators,
    ).toEqual(['b3multi', 'tracecontext', 'jaeger']);
    expect(settings({ ...endpoint, OTEL_PROPAGATORS: 'none' })).toMatchObject({
      propagators: [],
      description: expect.stringContaining('propagators none'),
    });
  });

  it('rejects an unknown protocol, sampler, propagator or compression at boot, naming each', () => {
    let error: unknown;
    try {
      validateEnv({
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc/json',
        OTEL_TRACES_SAMPLER: 'sometimes',
        OTEL_PROPAGATORS: 'tracecontext,xray',
        OTEL_EXPORTER_OTLP_COMPRESSION: 'zstd',
        OTEL_EXPORTER_OTLP_TIMEOUT: '10s',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const named = (error as ConfigError).problems.map((problem) => problem.split(/[ :]/)[0]);
    expect(named.sort()).toEqual([
      'OTEL_EXPORTER_OTLP_COMPRESSION',
      'OTEL_EXPORTER_OTLP_PROTOCOL',
      'OTEL_EXPORTER_OTLP_TIMEOUT',
      'OTEL_PROPAGATORS',
      'OTEL_TRACES_SAMPLER',
    ]);
  });
});

describe(createPropagator.name, () => {
  const inject = async (names: Parameters<typeof createPropagator>[0]) => {
    const { context, defaultTextMapSetter, trace, TraceFlags } = await import('@opentelemetry/api');
    const span = trace.wrapSpanContext({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4737',
      spanId: '00f067aa0ba902b7',
      traceFlags: TraceFlags.SAMPLED,
    });
    const carrier: Record<string, string> = {};
    (await createPropagator(names)).inject(
      trace.setSpan(context.active(), span),
      carrier,
      defaultTextMapSetter,
    );
    return carrier;
  };

  it('injects the headers of each named format', async () => {
    expect(Object.keys(await inject(['tracecontext', 'b3', 'jaeger'])).sort()).toEqual([
      'b3',
      'traceparent',
      'uber-trace-id',
    ]);
    expect(await inject(['b3multi'])).toEqual({
      'x-b3-traceid': '4bf92f3577b34da6a3ce929d0e0e4737',
      'x-b3-spanid': '00f067aa0ba902b7',
      'x-b3-sampled': '1',
    });
    expect(await inject([])).toEqual({});
  });
});
