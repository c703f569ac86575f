import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../src/project-root.js';
import { freePorts } from './test-app.js';

/** The built service (`node dist/src/main.js`) as a real process, as a container runs it. */
export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  grpcAddress: string;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Builds dist/ when the sources are newer (a no-op after `npm run build`). */
export function buildService(): void {
  execFileSync(process.execPath, [path.join(projectRoot(), 'scripts', 'build-if-needed.mjs')], {
    stdio: 'ignore',
  });
}

export async function startService(env: Record<string, string>): Promise<ServiceProcess> {
  const [port, grpcPort] = await freePorts(2);
  let output = '';
  const child = spawn(process.execPath, [path.join(projectRoot(), 'dist', 'src', 'main.js')], {
    cwd: projectRoot(),
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: String(port),
      GRPC_PORT: String(grpcPort),
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    grpcAddress: `127.0.0.1:${grpcPort}`,
    output: () => output,
    exited,
  };
}

/** Polls `check` until it returns true; fails after `timeoutMs` with `what` in the message. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}
