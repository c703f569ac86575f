// Renders a kustomize overlay of k8s/ into its objects, for the deployment specs (test/deployment/): with
// `kubectl kustomize` when kubectl is installed (what `kubectl apply -k` sends), else from the
// plain files, following just the kustomize features k8s/ uses (resources, configMapGenerator,
// labels, images). Static only: no cluster.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments, parse as parseYaml } from 'yaml';

export interface K8sObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

export interface Kustomization {
  resources?: string[];
  components?: string[];
  images?: { name: string; newName?: string; newTag?: string; digest?: string }[];
  configMapGenerator?: {
    name: string;
    behavior?: 'create' | 'merge' | 'replace';
    envs?: string[];
    literals?: string[];
    options?: { labels?: Record<string, string> };
  }[];
  replacements?: unknown[];
  labels?: {
    pairs: Record<string, string>;
    includeSelectors?: boolean;
    fields?: { kind?: string; path: string; create?: boolean }[];
  }[];
}

export interface Rendered {
  /** `kubectl kustomize` or `plain files`: only the first applies hash suffixes and replacements. */
  renderer: 'kubectl kustomize' | 'plain files';
  objects: K8sObject[];
}

export function readKustomization(dir: string): Kustomization {
  return parseYaml(readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8')) as Kustomization;
}

/** Each `KEY=value` line of a kustomize env file; `#` lines and blank lines are skipped. */
export function parseKustomizeEnv(text: string): Record<string, string> {
  const data: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const eq = trimmed.indexOf('=');
    if (eq <= 0) throw new Error(`not KEY=value: ${line}`);
    data[trimmed.slice(0, eq)] = trimmed.slice(eq + 1);
  }
  return data;
}

export function parseYamlObjects(text: string, source: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${source}: ${doc.errors.join('; ')}`);
      return doc.toJS() as K8sObject | null;
    })
    .filter((object): object is K8sObject => object !== null);
}

export const kubectlAvailable =
  spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;

export function renderOverlay(dir: string): Rendered {
  if (kubectlAvailable) {
    const output = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
    return { renderer: 'kubectl kustomize', objects: parseYamlObjects(output, dir) };
  }
  return { renderer: 'plain files', objects: renderPlain(dir) };
}

function renderPlain(dir: string): K8sObject[] {
  const kustomization = readKustomization(dir);
  const objects: K8sObject[] = [];
  for (const resource of kustomization.resources ?? []) {
    const target = path.join(dir, resource);
    objects.push(
      ...(statSync(target).isDirectory()
        ? renderPlain(target)
        : parseYamlObjects(readFileSync(target, 'utf8'), target)),
    );
  }
  for (const generator of kustomization.configMapGenerator ?? []) {
    const data: Record<string, string> = {};
    for (const file of generator.envs ?? []) {
      Object.assign(data, parseKustomizeEnv(readFileSync(path.join(dir, file), 'utf8')));
    }
    for (const literal of generator.literals ?? []) Object.assign(data, parseKustomizeEnv(literal));
    const existing = objects.find(
      (o) => o.kind === 'ConfigMap' && o.metadata?.name === generator.name,
    );
    if (generator.behavior === 'merge' && existing) {
      Object.assign(existing.data as Record<string, string>, data);
      continue;
    }
    objects.push({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: generator.name, labels: generator.options?.labels },
      data,
    });
  }
  for (const { pairs, fields } of kustomization.labels ?? []) {
    // Without `fields`, every object's metadata; with them, those kinds' metadata/labels only.
    const kinds = fields?.filter((field) => field.path === 'metadata/labels').map((f) => f.kind);
    for (const object of objects.filter((o) => !kinds || kinds.includes(o.kind))) {
      object.metadata = { ...object.metadata, labels: { ...object.metadata?.labels, ...pairs } };
    }
  }
  for (const image of kustomization.images ?? []) {
    for (const container of podContainers(objects)) {
      const [name, tag] = container.image.split(':');
      if (name !== image.name) continue;
      const digest = image.digest ? `@${image.digest}` : '';
      container.image = `${image.newName ?? name}:${image.newTag ?? tag ?? 'latest'}${digest}`;
    }
  }
  return objects;
}

function podContainers(objects: K8sObject[]): { image: string }[] {
  return objects.flatMap((object) => {
    const template = (object.spec as { template?: { spec?: { containers?: { image: string }[] } } })
      ?.template;
    return template?.spec?.containers ?? [];
  });
}

/** The directories under k8s/overlays, each a deployable kustomization. */
export function listOverlays(k8sDir: string): string[] {
  const overlays = path.join(k8sDir, 'overlays');
  return readdirSync(overlays)
    .filter((name) => existsSync(path.join(overlays, name, 'kustomization.yaml')))
    .sort();
}
