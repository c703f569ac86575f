// The Deployment's resources and the HPA's target come from a measurement, not a guess: the
// overload benchmark's committed run (bench/results/, `npm run bench -- --overload`), whose
// capacity run gives the RSS and the CPU of one pod serving as much as it can at the SLO latency,
// and whose spikes give the worst RSS. Memory is requested as much as it is limited (sized from
// the worst spike), so a pod's memory is reserved on its node. docs/deploying.md ("Capacity")
// states the headroom. When the benchmark is run again and committed, these checks hold the
// manifests to the new figures.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { overlayCases } from '../support/k8s-manifests.js';
import { projectRoot } from '../../src/project-root.js';

/** The committed overload run the resources are sized from. */
const MEASURED = 'bench/results/2026-11-28-overload-node20.json';

interface Run {
  name: string;
  durationS: number;
  serviceCpuS: number;
  peakRssBytes: number;
}

const measured = JSON.parse(readFileSync(path.join(projectRoot(), MEASURED), 'utf8')) as {
  runs: Run[];
};
const capacity = measured.runs.find((run) => run.name === 'capacity')!;
/** Cores the service used while serving its capacity. */
const capacityCores = capacity.serviceCpuS / capacity.durationS;
const worstRss = Math.max(...measured.runs.map((run) => run.peakRssBytes));

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 };

/** A Kubernetes memory quantity (`320Mi`, `1Gi`, `500M`) in bytes. */
function bytes(quantity: string | number | undefined): number {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|k|M|G)?$/.exec(String(quantity));
  if (!match) throw new Error(`not a memory quantity: ${quantity}`);
  const [, value, unit] = match;
  const decimal: Record<string, number> = { k: 1e3, M: 1e6, G: 1e9 };
  return Number(value) * (unit ? (BINARY[unit] ?? decimal[unit]) : 1);
}

/** A Kubernetes CPU quantity (`250m`, `1`, `1.5`) in cores. */
function cores(quantity: string | number | undefined): number {
  const text = String(quantity);
  return text.endsWith('m') ? Number(text.slice(0, -1)) / 1000 : Number(text);
}

describe.each(overlayCases)('resources from measurements: k8s/overlays/%s', (_name, manifests) => {
  const { container, hpa } = manifests;
  const requests = container.resources?.requests ?? {};
  const limits = container.resources?.limits ?? {};

  it('the figures it is sized from are a real run: a capacity run and the spikes', () => {
    expect(capacity.peakRssBytes).toBeGreaterThan(100e6);
    expect(capacityCores).toBeGreaterThan(0.5);
    expect(measured.runs.length).toBeGreaterThan(5);
  });

  it('requests as much memory as it limits: reserved where it runs, never overcommitted', () => {
    expect(requests.memory).toBeDefined();
    expect(bytes(requests.memory)).toBe(bytes(limits.memory));
    expect(bytes(requests.memory)).toBeGreaterThanOrEqual(capacity.peakRssBytes);
  });

  it('limits memory at least a fifth above the worst spike measured, at most a half', () => {
    expect(bytes(limits.memory)).toBeGreaterThanOrEqual(1.2 * worstRss);
    // Requested as much, the headroom is reserved on the node: no more than the spikes need.
    expect(bytes(limits.memory)).toBeLessThanOrEqual(1.5 * worstRss);
  });

  it('requests the CPU of the capacity run, and limits it well above (GC and log threads)', () => {
    expect(cores(requests.cpu)).toBeGreaterThanOrEqual(0.8 * capacityCores);
    expect(cores(requests.cpu)).toBeLessThanOrEqual(1.2 * capacityCores);
    expect(cores(limits.cpu)).toBeGreaterThanOrEqual(1.5 * capacityCores);
  });

  it('scales out before a pod reaches its capacity', () => {
    const target = hpa.spec?.metrics?.find((m) => m.resource?.name === 'cpu')?.resource?.target;
    const utilisation = (target?.averageUtilization ?? 0) / 100;
    expect(utilisation * cores(requests.cpu)).toBeLessThanOrEqual(0.8 * capacityCores);
    expect(utilisation * cores(requests.cpu)).toBeGreaterThanOrEqual(0.5 * capacityCores);
  });
});
