// The README's five-minute tour, run as written against the real application on an empty
// database: every curl and grpcurl command of the tour's code blocks is sent, and every answer
// line shown under it (status line, headers, body fields) must be what comes back. A change of
// behaviour that would make the tour lie fails here.
import { readFileSync } from 'node:fs';
import { status } from '@grpc/grpc-js';
import path from 'node:path';
import { projectRoot } from '../../src/project-root.js';
import { getUser, usersClient, type UsersClient } from '../../scripts/lib/grpc-client.mjs';
import { createTestApp, resetDatabase, type TestApp } from '../support/test-app.js';

interface Step {
  command: string;
  expected: string[];
}

const readme = readFileSync(path.join(projectRoot(), 'README.md'), 'utf8');

/** The commands of the tour's ```sh blocks, each with the `# …` answer lines under it. */
function tourSteps(markdown: string): Step[] {
  const section = markdown.split(/^## /m).find((part) => part.startsWith('Five-minute tour'));
  if (!section) throw new Error('README.md has no "## Five-minute tour" section');
  const steps: Step[] = [];
  for (const [, block] of section.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const line of block.replace(/\\\n/g, ' ').split('\n')) {
      if (/^(curl|grpcurl) /.test(line)) steps.push({ command: line, expected: [] });
      else if (line.startsWith('# ') && steps.length > 0)
        steps.at(-1)!.expected.push(line.slice(2));
    }
  }
  return steps;
}

/** Shell words: whitespace-separated, with '…' and "…" quoting (all the tour uses). */
function shellWords(command: string): string[] {
  const words: string[] = [];
  for (const [, single, double, plain] of command.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) {
    words.push(single ?? double ?? plain);
  }
  return words;
}

interface HttpRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

function curlRequest(words: string[]): HttpRequest {
  const request: HttpRequest = { method: '', path: '', headers: {} };
  for (let i = 1; i < words.length; i++) {
    const word = words[i];
    if (word === '-X') request.method = words[++i];
    else if (word === '-H') {
      const [name, ...value] = words[++i].split(':');
      request.headers[name.trim()] = value.join(':').trim();
    } else if (word === '-d') request.body = words[++i];
    else if (word.startsWith('localhost:3000')) request.path = word.slice('localhost:3000'.length);
    else if (!/^-[si]+$/.test(word)) throw new Error(`the tour test does not know ${word}`);
  }
  request.method ||= request.body === undefined ? 'GET' : 'POST';
  return request;
}

/** Checks the answer against the lines shown: status, `Name: value` headers, a JSON body. */
function checkAnswer(
  expected: string[],
  answer: { status: number; headers: Headers; body: string },
): void {
  for (const line of expected) {
    const status = /^HTTP\/1\.1 (\d{3}) /.exec(line);
    const header = /^([A-Za-z-]+): (.*)$/.exec(line);
    if (status) expect(answer.status).toBe(Number(status[1]));
    else if (/^[[{]/.test(line)) expect(JSON.parse(answer.body)).toMatchObject(JSON.parse(line));
    else if (header) expect(`${header[1]}: ${answer.headers.get(header[1])}`).toBe(line);
    else throw new Error(`an answer line the tour test cannot check: ${line}`);
  }
}

const steps = tourSteps(readme);

describe('README five-minute tour', () => {
  let testApp: TestApp;
  let grpc: UsersClient;

  beforeAll(async () => {
    testApp = await createTestApp({ grpc: true });
    // "A fresh database": ids start at 1, as the tour shows them.
    await resetDatabase(testApp.dataSource);
    grpc = usersClient(testApp.grpcAddress);
  });

  afterAll(async () => {
    grpc?.close();
    if (testApp) await resetDatabase(testApp.dataSource);
    await testApp?.close();
  });

  it('has HTTP and gRPC requests, each followed by the answer it gets', () => {
    expect(steps.length).toBeGreaterThanOrEqual(10);
    expect(steps.some((step) => step.command.startsWith('grpcurl '))).toBe(true);
    expect(steps.filter((step) => step.expected.length === 0).map((step) => step.command)).toEqual(
      [],
    );
  });

  for (const step of steps) {
    it(step.command, async () => {
      const words = shellWords(step.command);
      if (words[0] === 'grpcurl') {
        // grpcurl -plaintext -d '{"id": 1}' localhost:5000 users.Users/GetUser
        expect(words.slice(-2)).toEqual(['localhost:5000', 'users.Users/GetUser']);
        const { id } = JSON.parse(words[words.indexOf('-d') + 1]) as { id: number };
        const result = await getUser(grpc, id, { deadlineMs: 5000 });
        expect(result.code).toBe(status.OK);
        for (const line of step.expected) expect(result.reply).toMatchObject(JSON.parse(line));
        return;
      }
      const request = curlRequest(words);
      const response = await fetch(`${testApp.url}${request.path}`, {
        method: request.method,
        headers: request.headers,
        body: request.body,
      });
      checkAnswer(step.expected, {
        status: response.status,
        headers: response.headers,
        body: await response.text(),
      });
    });
  }
});
