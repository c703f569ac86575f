// Response parity: the baseline and the Express ceiling must answer like the service (status,
// body shape, list and POST headers), or the comparison is unfair. Checked once per target, on the
// seeded data, before any load.
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
const COMPARED_HEADERS = ['content-type', 'x-total-count', 'link', 'location'];

export async function probe(target) {
  const answers = {};
  for (const probePath of PROBES) {
    const response = await fetch(target.base + probePath);
    answers[`GET ${probePath}`] = {
      status: response.status,
      headers: Object.fromEntries(COMPARED_HEADERS.map((h) => [h, response.headers.get(h)])),
      hasRequestId: response.headers.has('x-request-id'),
      body: await response.json(),
    };
  }
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
