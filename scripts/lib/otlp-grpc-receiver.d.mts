import type { OtlpReceiver } from './otlp-receiver.mjs';

export interface OtlpGrpcReceiver extends Omit<OtlpReceiver, 'stats'> {
  /** Export calls received, and the request metadata of the last one. */
  stats: { requests: number; metadata: Record<string, string | Buffer> };
}

export function startOtlpGrpcReceiver(): Promise<OtlpGrpcReceiver>;
