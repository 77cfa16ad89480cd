/**
 * The partition harness itself (`test/support/netns.ts`), without a
 * cluster: a server in one namespace, a client in another, joined by the
 * harness's switch; cutting the server's link both ways, then only what it
 * sends, makes a request time out, and healing it makes the next one
 * answer; a cut between the server and one client leaves another client
 * reaching it. As root; skipped with the reason otherwise.
 */
import { execFile } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { netnsSkipReason, Topology } from '../support/netns.js';

const skip = netnsSkipReason();
if (skip !== undefined) console.log(`partition harness test skipped: ${skip}`);

let topology: Topology | undefined;
afterEach(() => {
  topology?.destroy();
  topology = undefined;
});

/** One GET from the client node, answered with the status, or "timeout" after `ms`. */
function request(t: Topology, url: string, ms = 1_500, from = 'client'): Promise<string> {
  const script = `fetch(${JSON.stringify(url)}, { signal: AbortSignal.timeout(${ms}) }).then((r) => console.log(r.status), () => console.log('timeout'))`;
  return new Promise((resolve, reject) => {
    execFile('ip', ['netns', 'exec', t.node(from).namespace, process.execPath, '-e', script], (error, stdout) => (error ? reject(error) : resolve(stdout.trim())));
  });
}

describe.skipIf(skip !== undefined)('the partition harness', () => {
  it('cuts and heals a node’s link both ways and one way, between real namespaces', { timeout: 60_000 }, async () => {
    topology = new Topology();
    const server = topology.add('server');
    topology.add('client');
    const listening = topology.spawn('server', process.execPath, ['-e', `require('node:http').createServer((q, s) => s.end('ok')).listen(8046, ${JSON.stringify(server.address)}, () => console.log('up'))`]);
    await new Promise<void>((resolve) => listening.stdout!.once('data', () => resolve()));
    const url = `http://${server.address}:8046/`;

    expect(await request(topology, url)).toBe('200');
    topology.cut('server', 'both');
    expect(await request(topology, url)).toBe('timeout');
    topology.heal('server');
    expect(await request(topology, url)).toBe('200');
    topology.cut('server', 'outbound');
    expect(await request(topology, url)).toBe('timeout');
    topology.heal('server');
    topology.cut('server', 'inbound');
    expect(await request(topology, url)).toBe('timeout');
    topology.heal('server');
    expect(await request(topology, url)).toBe('200');
  });

  it('cuts two nodes apart, both ways and one way, while a third still reaches each', { timeout: 60_000 }, async () => {
    topology = new Topology();
    const server = topology.add('server');
    topology.add('client');
    topology.add('other');
    const listening = topology.spawn('server', process.execPath, ['-e', `require('node:http').createServer((q, s) => s.end('ok')).listen(8046, ${JSON.stringify(server.address)}, () => console.log('up'))`]);
    await new Promise<void>((resolve) => listening.stdout!.once('data', () => resolve()));
    const url = `http://${server.address}:8046/`;

    for (const how of ['both', 'outbound', 'inbound'] as const) {
      topology.cut('server', how, 'client');
      expect(await request(topology, url)).toBe('timeout');
      expect(await request(topology, url, 1_500, 'other')).toBe('200');
      topology.heal('server');
      expect(await request(topology, url)).toBe('200');
    }
  });
});
