export interface NodeRuntime {
  /** The node binary. */
  path: string;
  /** Its `node --version`, e.g. v24.18.0. */
  version: string;
}

export function pinnedNodeVersion(): string;
export function runtimeCacheDir(): string;
export function nodeVersionOf(binary: string): string;
export function installNode(version?: string, options?: { log?: (line: string) => void }): string;
export function resolveNode(
  spec: string | undefined,
  options?: { log?: (line: string) => void },
): NodeRuntime;
