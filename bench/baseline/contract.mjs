// The raw baseline's input rules and JSON shapes, the same as the service's (docs/api.md): ids,
// list queries (page, limit, sort, role), the POST /users body, and the JSON of users and posts.
// Split from ./http-server.mjs, which routes and answers; ./express-server.mjs mounts its routes.

const MAX_ID = 2_147_483_647;
const ID = /^[1-9][0-9]{0,9}$/;
const DIGITS = /^[1-9][0-9]*$/;
export const ROLE = /^[a-z0-9_-]{1,32}$/;
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
// A basic address check (local@domain.tld); the service uses class-validator's IsEmail.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const BODY_LIMIT = 100 * 1024;
const MAX_PAGE = 1_000_000;
const MAX_LIMIT = 100;
const DEFAULT_LIMIT = 20;

export const USER_COLUMNS = 'id, name, email, role, created_at, updated_at';
export const POST_COLUMNS = 'id, user_id, title, body, created_at, updated_at';
/** API sort field -> column (an allow-list: nothing from the client reaches the SQL text). */
export const USER_SORT = {
  id: 'id',
  name: 'name',
  email: 'email',
  role: 'role',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
};
export const POST_SORT = {
  id: 'id',
  title: 'title',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
};
const CREATE_USER_FIELDS = new Set(['name', 'email', 'role']);

export class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export const badRequest = (message) => new HttpError(400, message);

export function userJson(row) {
  const user = { id: row.id, name: row.name };
  if (row.email !== null) user.email = row.email;
  user.role = row.role;
  user.createdAt = row.created_at.toISOString();
  user.updatedAt = row.updated_at.toISOString();
  return user;
}

export function postJson(row) {
  return {
    id: row.id,
    userId: row.user_id,
    title: row.title,
    body: row.body,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function parseId(raw) {
  let value;
  try {
    value = decodeURIComponent(raw);
  } catch {
    value = raw;
  }
  const id = ID.test(value) ? Number(value) : NaN;
  if (!(id <= MAX_ID)) throw badRequest('id must be a positive 32-bit integer');
  return id;
}

export function single(params, name) {
  const values = params.getAll(name);
  if (values.length > 1) throw badRequest(`query parameter ${name} must be given at most once`);
  return values[0];
}

function integer(value, name, max, fallback) {
  if (value === undefined) return fallback;
  const n = DIGITS.test(value) && value.length <= 10 ? Number(value) : NaN;
  if (!(n >= 1 && n <= max)) throw badRequest(`${name} must be an integer between 1 and ${max}`);
  return n;
}

/** `page`, `limit` and `sort` as the service reads them; returns the ORDER BY clause. */
export function parseList(params, columns) {
  const page = integer(single(params, 'page'), 'page', MAX_PAGE, 1);
  const limit = integer(single(params, 'limit'), 'limit', MAX_LIMIT, DEFAULT_LIMIT);
  const order = [];
  const sort = single(params, 'sort');
  if (sort !== undefined) {
    const seen = new Set();
    for (const item of sort.split(',')) {
      const descending = item.startsWith('-');
      const field = descending ? item.slice(1) : item;
      if (field === '') throw badRequest('sort must not contain an empty field');
      if (!Object.hasOwn(columns, field)) {
        throw badRequest(`sort field ${field} is not one of ${Object.keys(columns).join(', ')}`);
      }
      if (seen.has(field)) throw badRequest(`sort field ${field} is named twice`);
      seen.add(field);
      order.push(`${columns[field]} ${descending ? 'DESC' : 'ASC'}`);
    }
  }
  // Ties are broken by id so pages never overlap, as in the service.
  if (!order.some((clause) => clause.startsWith('id '))) order.push('id ASC');
  return { page, limit, orderBy: order.join(', ') };
}

/** RFC 8288 Link header, the same relative URLs as src/lists/list-query.dto.ts. */
export function paginationLinks(path, search, page, limit, total) {
  const last = Math.max(1, Math.ceil(total / limit));
  const link = (target, rel) => {
    const params = new URLSearchParams(search);
    params.set('page', String(target));
    return `<${path}?${params.toString()}>; rel="${rel}"`;
  };
  const links = [link(1, 'first')];
  if (page > 1) links.push(link(Math.min(page - 1, last), 'prev'));
  if (page < last) links.push(link(page + 1, 'next'));
  links.push(link(last, 'last'));
  return links.join(', ');
}

/** Length in Unicode code points, as docs/api.md counts it. */
const codePoints = (value) => [...value].length;

function text(value, field, min, max) {
  if (typeof value !== 'string') throw badRequest(`${field} must be a string`);
  if (value.includes('\u0000') || !value.isWellFormed()) {
    throw badRequest(`${field} must not contain NUL characters or unpaired surrogates`);
  }
  const length = codePoints(value);
  if (length < min || length > max) {
    throw badRequest(`${field} must be ${min} to ${max} characters long`);
  }
  return value;
}

/** The body of POST /users: {name, email?, role?}, checked like CreateUserDto. */
export function validateCreateUser(body) {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw badRequest('request body must be a JSON object');
  }
  const unknown = Object.keys(body).filter((key) => !CREATE_USER_FIELDS.has(key));
  if (unknown.length > 0) throw badRequest(`property ${unknown[0]} should not exist`);
  const name = text(typeof body.name === 'string' ? body.name.trim() : body.name, 'name', 1, 100);
  let email = null;
  if (body.email !== undefined && body.email !== null) {
    email = text(body.email, 'email', 1, 254);
    if (!EMAIL.test(email)) throw badRequest('email must be a valid email address');
  }
  let role = 'member';
  if (body.role !== undefined) {
    if (typeof body.role !== 'string' || !ROLE.test(body.role)) {
      throw badRequest('role must be 1 to 32 characters of a-z, 0-9, _ and -');
    }
    role = body.role;
  }
  return { name, email, role };
}

export function readBody(request) {
  return new Promise((resolve, reject) => {
    const type = request.headers['content-type'] ?? '';
    if (!/^application\/json\s*(;|$)/i.test(type)) {
      request.resume();
      reject(new HttpError(415, 'request body must be JSON (Content-Type: application/json)'));
      return;
    }
    const chunks = [];
    let size = 0;
    request.on('data', (chunk) => {
      size += chunk.length;
      if (size > BODY_LIMIT) {
        reject(new HttpError(413, 'request body is larger than 102400 bytes'));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        reject(badRequest('request body is not valid JSON'));
      }
    });
    request.on('error', reject);
  });
}
