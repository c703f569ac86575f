import type { ChildProcess } from 'node:child_process';

export const SERVICE_ENTRY: string;
export const TELEMETRY_ENTRY: string;

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  pid: number;
  port: number;
  grpcPort: number;
  metricsPort: number;
  /** http://127.0.0.1:PORT */
  url: string;
  /** http://127.0.0.1:METRICS_PORT/metrics: Prometheus metrics are not on the API port. */
  metricsUrl: string;
  /** 127.0.0.1:GRPC_PORT */
  grpcAddress: string;
  output(): string;
  exited: Promise<ExitStatus>;
  exitStatus(): ExitStatus | undefined;
  alive(): boolean;
  stop(options?: { timeoutMs?: number }): Promise<ExitStatus>;
}

export interface StartOptions {
  env?: Record<string, string | undefined>;
  entry?: string;
  nodeFlags?: string[];
  /** How much of the output `output()` keeps (the end of it); all by default. */
  keepChars?: number;
  name?: string;
}

export function buildService(options?: { stdio?: 'ignore' | 'inherit' }): void;
export function startService(options?: StartOptions): Promise<ServiceProcess>;
export function outputTail(service: ServiceProcess, lines?: number): string;
export function waitUntilReady(
  service: ServiceProcess,
  options?: { timeoutMs?: number },
): Promise<void>;
export function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs?: number,
): Promise<void>;
