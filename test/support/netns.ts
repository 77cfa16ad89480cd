/**
 * Real network partitions for the fleet (issue 46, `docs/reliability.md`):
 * each node (the FoundationDB server, each Baton instance, the clients) in
 * a network namespace of its own, joined to a bridge in a "switch"
 * namespace by a veth pair, with an address used only inside these
 * namespaces (10.46.<run>.<n>/24). Everything is created by the harness and
 * removed by `destroy`, as root.
 *
 * Links are cut and healed at the switch port or by routes:
 * - `both`: the switch's end of the node's veth goes down (`ip link set … down`);
 * - `outbound`: what the node sends is dropped: a blackhole route to every
 *   other node in the node's namespace;
 * - `inbound`: what the node would receive is dropped: a blackhole route to
 *   the node in every other node's namespace.
 * Routes rather than `tc … netem loss 100%`: they need no kernel module
 * (the CI kernel has no sch_netem, classifiers or tc actions), and drop the
 * same packets.
 *
 * A cut between two named nodes only (`cut(name, how, peer)`) is made of
 * blackhole routes in the two namespaces, and healed with the node's other
 * cuts.
 *
 * The partition scenarios (`test/fleet/partition.fdb.test.ts`) put a
 * FoundationDB server of their own (`netns-fdb.ts`), N Baton instances and
 * a client per instance (`netns-client.ts`) on nodes, record every
 * operation's invocation and answer (`history.ts`), and cut: one instance
 * from the cluster mid-load, both ways and one way; one from its clients
 * only; the cluster from everyone; a link flapping every few hundred ms for
 * a minute. They need root, `ip`, and a FoundationDB server binary to start
 * inside a namespace (`FDB_SERVER_BIN`, with `FDB_CLUSTER_FILE` naming the
 * client library's setup); `partitionSkipReason` says which is missing.
 */
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Why the namespaces cannot be made here, or undefined when they can. */
export function netnsSkipReason(): string | undefined {
  if (process.platform !== 'linux') return 'network namespaces need Linux';
  if (process.getuid?.() !== 0) return 'network namespaces need root (CI runs as root)';
  try {
    execFileSync('ip', ['-V'], { stdio: 'ignore' });
  } catch {
    return 'the "ip" command (iproute2) is missing';
  }
  return undefined;
}

/** Why the partition scenarios cannot run here, or undefined when they can. */
export function partitionSkipReason(): string | undefined {
  const netns = netnsSkipReason();
  if (netns !== undefined) return netns;
  if (!process.env.FDB_CLUSTER_FILE) return 'the partition scenarios run a FoundationDB cluster in a namespace of its own; set FDB_CLUSTER_FILE (the client library must be installed)';
  const server = process.env.FDB_SERVER_BIN ?? '/usr/sbin/fdbserver';
  if (!existsSync(server)) return `no FoundationDB server binary at ${server}; set FDB_SERVER_BIN`;
  return undefined;
}

export type Cut = 'both' | 'outbound' | 'inbound';

export interface Node {
  readonly name: string;
  readonly namespace: string;
  /** The node's address inside the topology. */
  readonly address: string;
}

const ip = (...args: string[]): void => {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
};
const quietly = (work: () => void): void => {
  try {
    work();
  } catch {
    // Already as wanted (a link down twice, a qdisc already gone).
  }
};

/**
 * A switch and its nodes. `run` (0–255) keeps the addresses and names of
 * concurrent topologies apart; interface names stay within Linux's 15
 * characters.
 */
export class Topology {
  private readonly nodes = new Map<string, Node & { index: number }>();
  private readonly children = new Set<ChildProcess>();
  /** Blackhole routes in force, by the node whose cut added them: [namespace, address]. */
  private readonly blackholes = new Map<string, [string, string][]>();
  private readonly switchNs: string;
  private destroyed = false;

  constructor(private readonly run = Math.floor(Math.random() * 250)) {
    this.switchNs = `b46-${run}-sw`;
    ip('netns', 'add', this.switchNs);
    ip('-n', this.switchNs, 'link', 'add', 'br0', 'type', 'bridge');
    ip('-n', this.switchNs, 'link', 'set', 'br0', 'up');
  }

  /** Adds a node in a namespace of its own, with loopback up and its port on the switch. */
  add(name: string): Node {
    const index = this.nodes.size + 2;
    const node = { name, namespace: `b46-${this.run}-${name}`, address: `10.46.${this.run}.${index}`, index };
    const inside = `b46n${this.run}i${index}`;
    const port = `b46n${this.run}p${index}`;
    ip('netns', 'add', node.namespace);
    ip('-n', node.namespace, 'link', 'set', 'lo', 'up');
    ip('link', 'add', inside, 'netns', node.namespace, 'type', 'veth', 'peer', 'name', port, 'netns', this.switchNs);
    ip('-n', node.namespace, 'addr', 'add', `${node.address}/24`, 'dev', inside);
    ip('-n', node.namespace, 'link', 'set', inside, 'up');
    ip('-n', this.switchNs, 'link', 'set', port, 'master', 'br0');
    ip('-n', this.switchNs, 'link', 'set', port, 'up');
    this.nodes.set(name, node);
    return node;
  }

  node(name: string): Node {
    const node = this.nodes.get(name);
    if (node === undefined) throw new Error(`No node "${name}" in the topology.`);
    return node;
  }

  /** Starts `command` inside the node's namespace; stopped by `destroy` if still running. */
  spawn(name: string, command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
    const child = spawn('ip', ['netns', 'exec', this.node(name).namespace, command, ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    return child;
  }

  /**
   * Cuts the node's link: both ways, or only what it sends, or only what it
   * receives. With `peer`, only between the two nodes (blackhole routes
   * both ways for `both`): an instance cut from the cluster but not from
   * its clients, or from its clients but not from the cluster.
   */
  cut(name: string, how: Cut = 'both', peer?: string): void {
    const node = this.nodes.get(name) ?? this.fail(name);
    if (how === 'both' && peer === undefined) {
      ip('-n', this.switchNs, 'link', 'set', `b46n${this.run}p${node.index}`, 'down');
      return;
    }
    const others = peer === undefined ? [...this.nodes.values()].filter((other) => other !== node) : [this.nodes.get(peer) ?? this.fail(peer)];
    const sent: [string, string][] = others.map((other) => [node.namespace, other.address]);
    const received: [string, string][] = others.map((other) => [other.namespace, node.address]);
    const routes = how === 'outbound' ? sent : how === 'inbound' ? received : [...sent, ...received];
    for (const [namespace, address] of routes) ip('-n', namespace, 'route', 'replace', 'blackhole', `${address}/32`);
    this.blackholes.set(name, [...(this.blackholes.get(name) ?? []), ...routes]);
  }

  /** Heals every cut of the node's link. */
  heal(name: string): void {
    const node = this.nodes.get(name) ?? this.fail(name);
    for (const [namespace, address] of this.blackholes.get(name) ?? []) quietly(() => ip('-n', namespace, 'route', 'del', 'blackhole', `${address}/32`));
    this.blackholes.delete(name);
    ip('-n', this.switchNs, 'link', 'set', `b46n${this.run}p${node.index}`, 'up');
  }

  /** Stops what runs in the namespaces and removes them (their veth ends go with them). */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const child of this.children) child.kill('SIGKILL');
    for (const node of this.nodes.values()) quietly(() => ip('netns', 'del', node.namespace));
    quietly(() => ip('netns', 'del', this.switchNs));
  }

  private fail(name: string): never {
    throw new Error(`No node "${name}" in the topology.`);
  }
}
