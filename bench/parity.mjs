// Response parity: the baseline and the Express ceiling must answer like the service (status,
// body shape, list and POST headers), or the comparison is unfair. The NestJS sample answers the
// routes the benchmark loads with the same status, the same items, the same values in the fields
// it shares with the service and the same list totals (it returns its entities as they are, and
// has no Link headers, request ids or writes). Checked once per target, on the seeded data,
// before any load.
import { BENCH_POST_ROLE } from './seed.mjs';

export const PROBES = [
  '/health',
  '/users/1',
  '/users/10', // every tenth seeded user has no email: the field must be omitted
  '/users?role=editor&sort=-createdAt&limit=20',
  '/users?role=admin&sort=-createdAt&limit=5&page=3',
  '/users?role=member&sort=name,-id&limit=3',
  '/users/7/posts',
  '/users/7/posts?sort=-createdAt&limit=2',
  '/users/2147483647',
  '/users/2147483647/posts',
  '/users/abc',
  '/users?limit=0',
];
/** The probes the NestJS sample answers: the benchmark's routes, with no page, sort or limit of its own. */
export const SAMPLE_PROBES = [
  '/health',
  '/users/1',
  '/users/10',
  '/users?role=editor&sort=-createdAt&limit=20',
  '/users/7/posts',
  '/users/2147483647',
  '/users/2147483647/posts',
  '/users/abc',
];
const COMPARED_HEADERS = ['content-type', 'x-total-count', 'link', 'location'];

/** The answers of `target` to the probes: the GETs of `paths`, then a POST /users (`create`). */
export async function probe(target, { paths = PROBES, create = true } = {}) {
  const answers = {};
  for (const probePath of paths) {
    const response = await fetch(target.base + probePath);
    answers[`GET ${probePath}`] = {
      status: response.status,
      headers: Object.fromEntries(COMPARED_HEADERS.map((h) => [h, response.headers.get(h)])),
      hasRequestId: response.headers.has('x-request-id'),
      body: await response.json(),
    };
  }
  if (!create) return answers;
  const response = await fetch(`${target.base}/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      name: '  Parity Probe  ',
      email: `parity-${target.kind}@example.com`,
      role: BENCH_POST_ROLE,
    }),
  });
  const created = await response.json();
  answers['POST /users'] = {
    status: response.status,
    location: response.headers.get('location') === `/users/${created.id}`,
    hasRequestId: response.headers.has('x-request-id'),
    keys: Object.keys(created).join(','),
    name: created.name,
  };
  return answers;
}

/** Differences between two probe sets; error messages may differ (free text), shapes may not. */
export function compareProbes(service, baseline, kind = 'baseline') {
  const problems = [];
  for (const [name, expected] of Object.entries(service)) {
    const actual = baseline[name];
    const comparable = (answer) =>
      JSON.stringify(
        answer.status >= 400
          ? { status: answer.status, errorIsString: typeof answer.body?.error === 'string' }
          : answer,
      );
    if (comparable(expected) !== comparable(actual)) {
      problems.push(`${name}: service ${comparable(expected)} vs ${kind} ${comparable(actual)}`);
    }
  }
  return problems;
}

/**
 * Differences between the service's answers and the NestJS sample's, on the sample's probes:
 * the same status, Content-Type and X-Total-Count, and for a success the same items with the
 * same values in every field the service's item has (the sample's entities carry more:
 * `version`, a null `email`). An error's body is not compared (Nest's default error body is its
 * own).
 */
export function compareShared(service, sample, kind = 'nest-sample') {
  const problems = [];
  for (const [name, actual] of Object.entries(sample)) {
    const expected = service[name];
    const shared = (item, like) =>
      Object.fromEntries(Object.keys(like).map((key) => [key, item?.[key]]));
    const sameBody =
      actual.status >= 400 ||
      (Array.isArray(expected.body)
        ? Array.isArray(actual.body) &&
          actual.body.length === expected.body.length &&
          expected.body.every(
            (item, i) => JSON.stringify(shared(actual.body[i], item)) === JSON.stringify(item),
          )
        : JSON.stringify(shared(actual.body, expected.body)) === JSON.stringify(expected.body));
    if (
      actual.status !== expected.status ||
      actual.headers['content-type'] !== expected.headers['content-type'] ||
      actual.headers['x-total-count'] !== expected.headers['x-total-count'] ||
      !sameBody
    ) {
      const total = (answer) => `total ${answer.headers['x-total-count'] ?? 'none'}`;
      problems.push(
        `${name}: service ${expected.status} ${total(expected)} ${JSON.stringify(expected.body).slice(0, 200)} vs ` +
          `${kind} ${actual.status} ${total(actual)} ${JSON.stringify(actual.body).slice(0, 200)}`,
      );
    }
  }
  return problems;
}
