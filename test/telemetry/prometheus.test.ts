/**
 * The dashboard and the alert rules against a real Prometheus scraping a
 * real Baton: `promtool check rules` passes, and every panel's and every
 * rule's PromQL returns data once Baton has served a little load. An alert
 * rule is evaluated without its threshold: a healthy service rightly fires
 * none, but the series it watches must exist. Skipped (with the reason)
 * where Prometheus is not installed, unless BATON_REQUIRE_PROMETHEUS=1
 * (CI), which makes a missing Prometheus a failure.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, buildTestApp, checkpointBody, type TestApp } from '../support/app.js';

const PROMETHEUS = process.env.PROMETHEUS_PATH ?? '/usr/bin/prometheus';
const PROMTOOL = process.env.PROMTOOL_PATH ?? '/usr/bin/promtool';
const required = process.env.BATON_REQUIRE_PROMETHEUS === '1';
const missing = !existsSync(PROMETHEUS) || !existsSync(PROMTOOL) ? `skipped: Prometheus is not installed (${PROMETHEUS}; apt-get install prometheus)` : undefined;
if (missing && !required) console.warn(missing);

const root = new URL('../../', import.meta.url).pathname;
const rulesFile = join(root, 'deploy/prometheus/alerts.yml');
const dashboard = JSON.parse(readFileSync(join(root, 'deploy/grafana/baton.json'), 'utf8')) as { panels: { title: string; targets: { expr: string }[] }[] };
const rules = (parse(readFileSync(rulesFile, 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] }).groups.flatMap((g) => g.rules);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

describe.skipIf(missing !== undefined && !required)('the dashboard and alerts on a real Prometheus', () => {
  let t: TestApp;
  let prometheus: ChildProcess | undefined;
  let api: string;
  const dir = mkdtempSync(join(tmpdir(), 'baton-prometheus-'));

  beforeAll(async () => {
    if (missing) throw new Error(`BATON_REQUIRE_PROMETHEUS=1, but ${missing}`);
    t = await buildTestApp();
    const baton = new URL(await t.app.listen({ port: 0, host: '127.0.0.1' }));
    const port = await freePort();
    api = `http://127.0.0.1:${port}`;
    writeFileSync(
      join(dir, 'prometheus.yml'),
      `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - ${rulesFile}\nscrape_configs:\n  - job_name: baton\n    static_configs:\n      - targets: ['${baton.host}']\n`,
    );
    prometheus = spawn(PROMETHEUS, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: 'ignore' });
    // A little load of every kind the panels show: writes, reads, a handoff and its acknowledgment, a verification.
    for (let i = 0; i < 20; i++) {
      const created = (await t.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody(`load-${i % 4}`) })).json() as { id: string };
      await t.app.inject({ method: 'GET', url: `/v1/checkpoints/${created.id}`, headers: auth() });
      await t.app.inject({ method: 'GET', url: `/v1/tasks/load-${i % 4}/checkpoints/latest`, headers: auth() });
    }
    // The handoff comes after Prometheus has scraped the counters at 0: the handoff ratio is a rate, present only
    // with handoffs in its window (the alert is silent without any), and a counter's first sample is no increase.
    await scraped(2);
    const last = (await t.app.inject({ method: 'GET', url: '/v1/tasks/load-0/checkpoints/latest', headers: auth() })).json() as { id: string };
    const { handoff } = (await t.app.inject({ method: 'POST', url: `/v1/checkpoints/${last.id}/handoff`, headers: auth(), payload: { trigger: 'explicit' } })).json() as { handoff: { id: string } };
    await t.app.inject({ method: 'POST', url: `/v1/handoffs/${handoff.id}/ack`, headers: auth(), payload: { agentId: 'next' } });
    await t.app.inject({ method: 'GET', url: '/v1/tasks/load-1/audit/verify', headers: auth('auditor') });
    // Several scrapes, so rate() and increase() have two samples in their range.
    await scraped(5);
  }, 60_000);

  afterAll(async () => {
    prometheus?.kill('SIGTERM');
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Waits until Prometheus has scraped Baton `times` times within the last minute. */
  async function scraped(times: number): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const up = await fetch(`${api}/api/v1/query?query=${encodeURIComponent('count_over_time(up{job="baton"}[1m])')}`).then((r) => r.json() as Promise<{ data?: { result: { value: [number, string] }[] } }>).catch(() => undefined);
      if (Number(up?.data?.result[0]?.value[1] ?? 0) >= times) return;
      if (Date.now() > deadline) throw new Error(`Prometheus did not scrape Baton ${times} times within 30 s.`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  async function query(expr: string): Promise<unknown[]> {
    const res = (await (await fetch(`${api}/api/v1/query?query=${encodeURIComponent(expr)}`)).json()) as { status: string; data?: { result: unknown[] }; error?: string };
    expect(res.status, `${expr}: ${res.error ?? ''}`).toBe('success');
    return res.data?.result ?? [];
  }

  it('passes promtool check rules', () => {
    expect(execFileSync(PROMTOOL, ['check', 'rules', rulesFile], { encoding: 'utf8' })).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('passes promtool test rules: the handoff alert counts a handoff acknowledged on another instance, and is silent without handoffs', () => {
    expect(execFileSync(PROMTOOL, ['test', 'rules', join(root, 'deploy/prometheus/alerts.test.yml')], { encoding: 'utf8' })).toMatch(/SUCCESS/);
  });

  it('has data for every panel of the dashboard', async () => {
    for (const panel of dashboard.panels) {
      for (const target of panel.targets) expect((await query(target.expr)).length, `${panel.title}: ${target.expr}`).toBeGreaterThan(0);
    }
  });

  it('has data for every alert rule’s expression, its threshold left out', async () => {
    for (const rule of rules) {
      const watched = rule.expr.replace(/\s*[<>]=?\s*[\d.]+\s*$/, '');
      expect((await query(watched)).length, `${rule.alert}: ${watched}`).toBeGreaterThan(0);
    }
  });
});
