/**
 * docs/observability.md lists every metric Baton registers (besides
 * prom-client's default process metrics), with its type and labels, and
 * nothing else.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics.js';

const page = readFileSync(new URL('../../docs/observability.md', import.meta.url), 'utf8');

describe('docs/observability.md', () => {
  it('lists exactly the registered metrics, each with its type and label names', async () => {
    const metrics = createMetrics();
    const registered = (await metrics.registry.getMetricsAsJSON()).filter((m) => !/^(process|nodejs)_/.test(m.name));
    const rows = new Map([...page.matchAll(/^\| `([a-z_]+)` \| (\w+) \|([^|]*)\|/gm)].map((m) => [m[1]!, { type: m[2]!, labels: [...m[3]!.matchAll(/`([a-z_]+)`/g)].map((l) => l[1]!) }]));
    expect([...rows.keys()].sort()).toEqual(registered.map((m) => m.name).sort());
    for (const metric of registered) {
      const row = rows.get(metric.name)!;
      expect(row.type, metric.name).toBe(metric.type);
      const labels = (metrics.registry.getSingleMetric(metric.name) as unknown as { labelNames?: string[] }).labelNames ?? [];
      // Documented label names include the label values listed in parentheses: the names must all be there.
      for (const label of labels) expect(row.labels, `${metric.name} label ${label}`).toContain(label);
    }
  });
});
