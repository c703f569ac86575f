import type { ExecFileSyncOptions } from 'node:child_process';

export function findTool(name: string): string | undefined;
export function findPostgresBin(tool?: string): string | undefined;
export function serviceUser(): { uid?: number; gid?: number };
export function serviceTempDir(prefix: string): Promise<{ dir: string; remove(): Promise<void> }>;
export function runAsServiceUser(
  file: string,
  args: string[],
  options?: ExecFileSyncOptions,
): Buffer | string;

export interface Daemon {
  name: string;
  pid: number | undefined;
  output(): string;
  running(): boolean;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<void>;
}

export function startDaemon(
  file: string,
  args: string[],
  options?: { asUser?: boolean; name?: string; env?: NodeJS.ProcessEnv },
): Daemon;
export function waitForPort(daemon: Daemon, port: number, timeoutMs?: number): Promise<void>;
export function startListening(
  file: string,
  args: string[],
  options: {
    port: number;
    cleanup: () => Promise<void>;
    asUser?: boolean;
    name?: string;
    env?: NodeJS.ProcessEnv;
  },
): Promise<Daemon>;
