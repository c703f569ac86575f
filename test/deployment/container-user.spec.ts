// The container runs as a non-root user, in the image and in Kubernetes.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/project-root.js';

const ROOT = projectRoot();

describe('the container', () => {
  it('runs as a numeric non-root user, in the image and in Kubernetes', () => {
    const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    const users = [...dockerfile.matchAll(/^USER\s+(\S+)/gm)].map((match) => match[1]);
    const runtimeUser = users.at(-1);
    expect(runtimeUser).toMatch(/^[1-9][0-9]*$/);
    const deployment = readFileSync(path.join(ROOT, 'k8s', 'base', 'deployment.yaml'), 'utf8');
    expect(deployment).toMatch(/runAsNonRoot: true/);
    expect(deployment).not.toMatch(/runAsUser: 0\b/);
    expect(deployment).toMatch(/allowPrivilegeEscalation: false/);
  });
});
