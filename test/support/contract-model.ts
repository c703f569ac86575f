// The validation rules of docs/api.md, as a model the property-based tests compare the service with:
// which bodies are valid, what the server parses, and the user an accepted write must return.
import { isEmail } from 'class-validator';
import { ISO_DATE } from './expected-errors.js';
import { BODY_LIMIT, ROLE } from './fuzz-app.js';

export type Json = Record<string, unknown>;
export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
export const has = (object: Json, key: string) => Object.prototype.hasOwnProperty.call(object, key);
const codePoints = (value: string) => [...value].length;
const storable = (value: string) => !value.includes('\u0000') && value.isWellFormed();

function text(value: unknown, min: number, max: number, trim: boolean): boolean {
  if (typeof value !== 'string') return false;
  const stored = trim ? value.trim() : value;
  return storable(stored) && codePoints(stored) >= min && codePoints(stored) <= max;
}
const emailOk = (value: unknown) =>
  value === null || (typeof value === 'string' && text(value, 1, 254, false) && isEmail(value, {}));
const roleOk = (value: unknown) => typeof value === 'string' && ROLE.test(value);
const onlyKeys = (object: Json, keys: string[]) =>
  Object.keys(object).every((k) => keys.includes(k));

/** POST /users and PUT /users/:id: a full representation. */
export const validUser = (body: unknown): body is Json =>
  isObject(body) &&
  onlyKeys(body, ['name', 'email', 'role']) &&
  text(body.name, 1, 100, true) &&
  (!has(body, 'email') || emailOk(body.email)) &&
  (!has(body, 'role') || roleOk(body.role));

/** PATCH /users/:id: only the fields sent; null only for email; no body is no change. */
export const validPatch = (body: unknown): body is Json =>
  body === undefined ||
  (isObject(body) &&
    onlyKeys(body, ['name', 'email', 'role']) &&
    (!has(body, 'name') || text(body.name, 1, 100, true)) &&
    (!has(body, 'email') || emailOk(body.email)) &&
    (!has(body, 'role') || roleOk(body.role)));

export const validPost = (body: unknown): body is Json =>
  isObject(body) &&
  onlyKeys(body, ['title', 'body']) &&
  text(body.title, 1, 200, true) &&
  (!has(body, 'body') || text(body.body, 0, 10_000, false));

/** What the server parses `text` to: 'malformed' when it is not JSON. */
export function parsed(bodyText: string | undefined): unknown {
  // Content-Length: 0 is no body at all, the same as none.
  if (bodyText === undefined || bodyText === '') return undefined;
  const received = Buffer.from(bodyText, 'utf8')
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  try {
    return JSON.parse(received);
  } catch {
    return 'malformed' as const;
  }
}

export const oversized = (bodyText: string | undefined) =>
  bodyText !== undefined && Buffer.byteLength(bodyText) > BODY_LIMIT;

export function expectedUser(body: Json, id: number, before?: Json) {
  const merged: Json = before ? { ...before } : { role: 'member', active: true };
  if (has(body, 'name')) merged.name = (body.name as string).trim();
  if (has(body, 'role')) merged.role = body.role;
  if (has(body, 'email')) {
    if (body.email === null) delete merged.email;
    else merged.email = body.email;
  }
  return {
    ...merged,
    id,
    createdAt: expect.stringMatching(ISO_DATE),
    updatedAt: expect.stringMatching(ISO_DATE),
  };
}
