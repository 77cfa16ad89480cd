/**
 * The deployment files, linted: no container engine or cluster runs here
 * (docs/deploy.md says what was run and what was not). Every YAML parses;
 * the compose file has its services and the Kubernetes files their kinds;
 * the Dockerfile runs as a non-root user, checks health and installs only
 * production dependencies; and every BATON_* variable the files set is one
 * that src/config.ts reads.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ENV_NAMES } from '../src/config.js';

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

  it('give Kubernetes a Deployment, Service, HPA, PDB, ServiceMonitor and a FoundationDBCluster', () => {
    const kinds = yamlFiles('deploy/k8s').flatMap((file) => documents(file).map((doc) => doc.kind));
    expect(kinds).toEqual(expect.arrayContaining(['Deployment', 'Service', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'ServiceMonitor', 'FoundationDBCluster']));
  });

  it('build an image that runs as a non-root user, checks its health and carries only production dependencies', () => {
    const dockerfile = read('deploy/Dockerfile');
    expect(dockerfile).toMatch(/^FROM .* AS build$/m);
    expect(dockerfile).toMatch(/^RUN npm ci --omit=dev/m);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*/m);
    expect(dockerfile).toMatch(/foundationdb-clients_\$\{FDB_VERSION\}-1_amd64\.deb/);
  });

  it('set only BATON_* variables that src/config.ts reads', () => {
    const known = new Set(Object.values(ENV_NAMES));
    const used = new Set([...['docker-compose.yml', 'deploy/Dockerfile', ...yamlFiles('deploy')].flatMap((file) => [...read(file).matchAll(/\b(BATON_[A-Z_]+)\b/g)].map((m) => m[1]!))]);
    expect(used.size).toBeGreaterThan(3);
    for (const name of used) expect(known.has(name), `${name} is not a setting of src/config.ts`).toBe(true);
  });
});
