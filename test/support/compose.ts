// docker-compose.yml, parsed, with its variables as the services see them.
import { parse as parseYaml } from 'yaml';
import { read } from './project-files.js';

export interface ComposeService {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  depends_on?: Record<string, { condition?: string }> | string[];
  ports?: (string | number | { target?: number })[];
  volumes?: (string | { source?: string; target?: string })[];
  healthcheck?: { test?: string | string[]; disable?: boolean };
  stop_grace_period?: string;
}
interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}
export const compose = parseYaml(read('docker-compose.yml')) as ComposeFile;

/** `${NAME:-default}` and `${NAME-default}` take their default; a bare `${NAME}` has none. */
function interpolateDefaults(value: string): string {
  return value.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}/g,
    (whole, _name, fallback) => {
      expect({ variable: whole, hasDefault: fallback !== undefined }).toEqual({
        variable: whole,
        hasDefault: true,
      });
      return fallback as string;
    },
  );
}

export function composeEnv(service: ComposeService): Map<string, string> {
  const env = new Map<string, string>();
  const entries = Array.isArray(service.environment)
    ? service.environment.map((item) => {
        const eq = item.indexOf('=');
        return eq < 0 ? [item, ''] : [item.slice(0, eq), item.slice(eq + 1)];
      })
    : Object.entries(service.environment ?? {});
  for (const [name, value] of entries) env.set(name, interpolateDefaults(String(value ?? '')));
  return env;
}

/** Seconds in a Compose duration such as `25s`, `1m30s`, `1500ms`. */
export function composeSeconds(duration: string): number {
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001, us: 1e-6 };
  const parts = [...duration.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us)/g)];
  expect(parts.map((p) => p[0]).join('')).toBe(duration);
  return parts.reduce((sum, [, n, unit]) => sum + Number(n) * units[unit], 0);
}
