/**
 * The deployment files, linted: no container engine or cluster runs here
 * (docs/deploy.md says what was run and what was not). Every YAML parses;
 * the compose file has its services and the Kubernetes files their kinds;
 * the Dockerfile runs as a non-root user, checks health and installs only
 * production dependencies; every BATON_* variable the files set is one
 * that src/config.ts reads; and each instance's write-queue journal has a
 * disk of its own that outlives the process (a StatefulSet's volume claim,
 * a named volume per compose replica), probes that keep an instance whose
 * store is down alive and in rotation, and a grace period from the
 * orchestrator longer than the one the queue replays in at a stop.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ENV_NAMES, loadConfig } from '../src/config.js';

const root = new URL('../', import.meta.url).pathname;
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

function yamlFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return yamlFiles(path);
    return /\.ya?ml$/.test(entry.name) ? [path] : [];
  });
}

const documents = (path: string) => parseAllDocuments(read(path), { merge: true }).map((doc) => {
  expect(doc.errors, path).toEqual([]);
  return doc.toJS() as Record<string, unknown>;
});

interface Container {
  name: string;
  env: { name: string; value?: string }[];
  volumeMounts: { name: string; mountPath: string }[];
  livenessProbe?: { httpGet?: { path: string } };
  readinessProbe?: { httpGet?: { path: string } };
}

interface K8sObject {
  kind: string;
  metadata: { name: string };
  spec: {
    serviceName?: string;
    clusterIP?: string;
    selector?: Record<string, unknown> & { matchLabels?: Record<string, string> };
    scaleTargetRef?: { kind: string; name: string };
    volumeClaimTemplates?: { metadata: { name: string } }[];
    template?: { spec: { containers: Container[]; volumes?: { name: string }[]; terminationGracePeriodSeconds?: number; securityContext?: { runAsUser?: number; fsGroup?: number } } };
  };
}

interface ComposeFile {
  services: Record<string, { environment?: Record<string, string | number>; volumes?: string[]; stop_grace_period?: string }>;
  volumes?: Record<string, unknown>;
}

/** The configuration an instance started with these variables reads (the service's own defaults for the rest). */
function configOf(env: { name: string; value?: string }[]) {
  return loadConfig(Object.fromEntries(env.flatMap(({ name, value }) => (value === undefined ? [] : [[name, value]]))));
}

/** A compose duration (`40s`, `1m30s`) in seconds; 10 s, Docker's default, when absent. */
function seconds(duration: string | undefined): number {
  if (duration === undefined) return 10;
  const match = /^(?:(\d+)m)?(?:(\d+)s)?$/.exec(duration);
  expect(match, `unreadable duration ${duration}`).not.toBeNull();
  return Number(match![1] ?? 0) * 60 + Number(match![2] ?? 0);
}

describe('deploy/ and docker-compose.yml', () => {
  it('parse as YAML, every document of every file', () => {
    const files = ['docker-compose.yml', ...yamlFiles('deploy')];
    expect(files.length).toBeGreaterThanOrEqual(7);
    for (const file of files) expect(documents(file).length, file).toBeGreaterThan(0);
    expect(() => JSON.parse(read('deploy/grafana/baton.json'))).not.toThrow();
  });

  it('start FoundationDB (initialised), two Baton replicas on it, Prometheus, Grafana, a collector and Jaeger', () => {
    const [compose] = documents('docker-compose.yml') as [{ services: Record<string, { environment?: Record<string, string>; entrypoint?: string[] }> }];
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining(['fdb', 'fdb-init', 'baton-1', 'baton-2', 'prometheus', 'grafana', 'otel-collector', 'jaeger']));
    expect(compose.services['fdb-init']!.entrypoint!.join(' ')).toContain('configure new single');
    expect(compose.services['baton-2']!.environment).toMatchObject({ BATON_STORE: 'fdb' });
  });

  it('give Kubernetes a StatefulSet, Service, HPA, PDB, ServiceMonitor and a FoundationDBCluster', () => {
    const kinds = yamlFiles('deploy/k8s').flatMap((file) => documents(file).map((doc) => doc.kind));
    expect(kinds).toEqual(expect.arrayContaining(['StatefulSet', 'Service', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'ServiceMonitor', 'FoundationDBCluster']));
    // A Deployment's pods share no disk with their successors: a journal there is lost with its pod.
    expect(kinds).not.toContain('Deployment');
  });

  it('run Baton on Kubernetes as a StatefulSet whose pods each keep their journal on a volume claim, probed on /livez and /readyz, given longer to stop than the queue replays', () => {
    const docs = documents('deploy/k8s/baton.yaml') as unknown as K8sObject[];
    const set = docs.find((doc) => doc.kind === 'StatefulSet')!;
    expect(set.metadata.name).toBe('baton');
    const pod = set.spec.template!.spec;
    const container = pod.containers.find((c) => c.name === 'baton')!;
    const config = configOf(container.env);

    // The journal's directory is a volume claim of the set's, one per pod.
    const queueDir = config.queueDir ?? `${config.dataDir}/queue`;
    const mount = container.volumeMounts.find((m) => m.mountPath === queueDir);
    expect(mount, `no volume mounted at the queue directory ${queueDir}`).toBeDefined();
    expect(set.spec.volumeClaimTemplates!.map((claim) => claim.metadata.name)).toContain(mount!.name);
    expect(pod.volumes?.map((volume) => volume.name) ?? []).not.toContain(mount!.name);
    expect(pod.securityContext?.fsGroup).toBe(pod.securityContext?.runAsUser);

    // Its governing Service is headless and selects its pods.
    const headless = docs.find((doc) => doc.kind === 'Service' && doc.metadata.name === set.spec.serviceName)!;
    expect(headless, `no Service named ${set.spec.serviceName}`).toBeDefined();
    expect(headless.spec.clusterIP).toBe('None');
    expect(headless.spec.selector).toEqual(set.spec.selector!.matchLabels);
    const hpa = docs.find((doc) => doc.kind === 'HorizontalPodAutoscaler')!;
    expect(hpa.spec.scaleTargetRef).toMatchObject({ kind: 'StatefulSet', name: set.metadata.name });

    expect(container.livenessProbe?.httpGet?.path).toBe('/livez');
    expect(container.readinessProbe?.httpGet?.path).toBe('/readyz');
    expect(pod.terminationGracePeriodSeconds! * 1000).toBeGreaterThan(config.shutdownGraceMs);
  });

  it('give each Baton replica of the compose file its own named volume for its journal, and longer to stop than the queue replays', () => {
    const [compose] = documents('docker-compose.yml') as unknown as [ComposeFile];
    const replicas = Object.entries(compose.services).filter(([name]) => name.startsWith('baton-'));
    expect(replicas.length).toBeGreaterThanOrEqual(2);
    const volumes = replicas.map(([name, service]) => {
      const config = configOf(Object.entries(service.environment ?? {}).map(([key, value]) => ({ name: key, value: String(value) })));
      const queueDir = config.queueDir ?? `${config.dataDir}/queue`;
      const named = (service.volumes ?? []).map((entry) => entry.split(':')).find(([, target]) => target === queueDir);
      expect(named, `${name} has no volume at its queue directory ${queueDir}`).toBeDefined();
      expect(Object.keys(compose.volumes ?? {}), `${name}'s journal is not a named volume`).toContain(named![0]);
      expect(seconds(service.stop_grace_period) * 1000, name).toBeGreaterThan(config.shutdownGraceMs);
      return named![0];
    });
    expect(new Set(volumes).size, 'two replicas share a journal').toBe(volumes.length);
  });

  it('build an image that runs as a non-root user, checks its health and carries only production dependencies', () => {
    const dockerfile = read('deploy/Dockerfile');
    expect(dockerfile).toMatch(/^FROM .* AS build$/m);
    expect(dockerfile).toMatch(/^RUN npm ci --omit=dev/m);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*/m);
    expect(dockerfile).toMatch(/foundationdb-clients_\$\{FDB_VERSION\}-1_amd64\.deb/);
  });

  it('run the service in the image with the Node flags npm start gives it (the young generation and when a mark-compact starts)', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.start!;
    const startFlags = start.split(' ').filter((word) => word.startsWith('--'));
    expect(startFlags).toContain('--max-semi-space-size=32');
    expect(startFlags.some((flag) => flag.startsWith('--incremental-marking-soft-trigger='))).toBe(true);
    const cmd = /^CMD (\[.*\])$/m.exec(read('deploy/Dockerfile'));
    expect(cmd).not.toBeNull();
    expect(JSON.parse(cmd![1]!)).toEqual(['node', ...startFlags, 'dist/main.js']);
  });

  it('set only BATON_* variables that src/config.ts reads', () => {
    const known = new Set(Object.values(ENV_NAMES));
    const used = new Set([...['docker-compose.yml', 'deploy/Dockerfile', ...yamlFiles('deploy')].flatMap((file) => [...read(file).matchAll(/\b(BATON_[A-Z_]+)\b/g)].map((m) => m[1]!))]);
    expect(used.size).toBeGreaterThan(3);
    for (const name of used) expect(known.has(name), `${name} is not a setting of src/config.ts`).toBe(true);
  });
});
