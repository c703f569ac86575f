import type { Agent, IncomingHttpHeaders } from 'node:http';

export interface SendOptions {
  method?: string;
  path?: string;
  /** A list sends the header once per value (two Authorization headers, for instance). */
  headers?: Record<string, string | string[]>;
  /** An array is written piece by piece (one chunk each when `chunked`). */
  body?: string | Buffer | (string | Buffer)[];
  /** Send the body with Transfer-Encoding: chunked instead of a Content-Length. */
  chunked?: boolean;
  agent?: Agent | false;
  timeoutMs?: number;
}

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  bytes: Buffer;
}

export function send(base: string, options: SendOptions): Promise<Reply>;

export interface JsonResult {
  /** HTTP status, or the client-side failure: `timeout`, `ECONNRESET`, … */
  status: number | string;
  body?: unknown;
}

export function requestJson(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  options?: { agent?: Agent | false; timeoutMs?: number },
): Promise<JsonResult>;
