// The layout of k8s/: a base and its overlays, each listing every manifest it holds.
import { kubectlAvailable, parseKustomizeEnv, readKustomization } from '../support/k8s-render.js';
import { baseDir, overlays, yamlFiles } from '../support/k8s-manifests.js';
import { read } from '../support/project-files.js';

describe('Kubernetes layout (k8s/base, k8s/overlays)', () => {
  const base = readKustomization(baseDir);

  it('has a dev and a prod overlay, each built on k8s/base', () => {
    expect(overlays.map((o) => o.overlay)).toEqual(['dev', 'prod']);
    for (const { kustomization } of overlays) {
      expect(kustomization.resources).toContain('../../base');
    }
  });

  it('base lists every manifest except the secret example, and generates the ConfigMap', () => {
    expect([...(base.resources ?? [])].sort()).toEqual(
      yamlFiles(baseDir).filter((f) => f !== 'kustomization.yaml' && f !== 'secret.example.yaml'),
    );
    // A generated ConfigMap's name carries a hash of its data: a change rolls the pods.
    const generator = base.configMapGenerator?.find((g) => g.name === 'users-service-config');
    expect(generator?.envs).toEqual(['config.env']);
    expect(generator?.options?.labels?.['app.kubernetes.io/name']).toBe('users-service');
  });

  it('each overlay lists every manifest in its directory', () => {
    for (const { dir, kustomization } of overlays) {
      const local = (kustomization.resources ?? []).filter((r) => !r.startsWith('..')).sort();
      expect(local).toEqual(yamlFiles(dir).filter((f) => f !== 'kustomization.yaml'));
    }
  });

  it('config.env holds only KEY=value lines and comments', () => {
    expect(() => parseKustomizeEnv(read('k8s/base/config.env'))).not.toThrow();
  });

  it('is rendered by kubectl kustomize where kubectl is installed', () => {
    for (const { renderer } of overlays) {
      expect(renderer).toBe(kubectlAvailable ? 'kubectl kustomize' : 'plain files');
    }
  });
});
