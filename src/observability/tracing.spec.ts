import { ConfigError, validateEnv } from '../config/env.validation.js';
import { tracingSettings } from './tracing.js';

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
      description:
        'on, OTLP http/protobuf to http://collector:4318/v1/traces (sampler parentbased_always_on)',
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

  it('rejects a protocol that is not installed and an unknown sampler at boot', () => {
    expect(() =>
      validateEnv({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_TRACES_SAMPLER: 'sometimes' }),
    ).toThrow(ConfigError);
  });
});
