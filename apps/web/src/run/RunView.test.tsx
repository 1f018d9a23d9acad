// @vitest-environment jsdom
import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import WebSocket from 'ws';
import { compile, predict, type ProjectDocument, type SocketLike } from '@pipeloom/core';
import { RunView } from './RunView.js';
import { createRunStore, type RunStore } from '../store/run/store.js';

// The Run view rendered in jsdom against real agents on loopback: the predicted plan before
// running, connect, start, live numbers, the consumer's check. (jsdom has no canvas: the
// timeline's lane counts are read from its DOM attributes.)

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
// jsdom has no 2D canvas: its getContext logs "not implemented" and returns null; return null quietly.
HTMLCanvasElement.prototype.getContext = (() => null) as typeof HTMLCanvasElement.prototype.getContext;

// Under jsdom, URL is jsdom's, so paths come from the working directory (the repository root)
// rather than import.meta.url, and agents are started here rather than through the agent's
// helpers (which resolve their paths from import.meta.url).
const ROOT = process.cwd();
const TOKEN = 'runview-test-token';
const wsConnect = (url: string) => new WebSocket(url, { maxPayload: 1 << 30 }) as unknown as SocketLike;
// The agents' data root (--data d=DIR): where a document's sinks write.
const DATA = realpathSync(mkdtempSync(join(tmpdir(), 'pipeloom-runview-')));

function startAgent(name: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(ROOT, 'apps/agent/bin/pipeloom.js'), 'agent', '--name', name, '--port', '0', '--data', `d=${DATA}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PIPELOOM_TOKEN: TOKEN, EGL_PLATFORM: 'surfaceless' },
  });
  // The agents' last words, for a test that times out waiting on them.
  createInterface({ input: child.stderr! }).on('line', (l) => {
    agentLog.push(`[${name}] ${l}`);
    if (agentLog.length > 40) agentLog.shift();
  });
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', (line) => {
      const m = /^listening (\S+)/.exec(line);
      if (m) resolve({ url: m[1], child });
      else reject(new Error(`agent ${name} did not start: ${line}`));
    });
    child.once('exit', (code) => reject(new Error(`agent ${name} exited (${code})`)));
  });
}

let agents: { url: string; child: ChildProcess }[] = [];
const agentLog: string[] = [];
beforeAll(async () => {
  agents = await Promise.all(['h0', 'h1'].map(startAgent));
});
afterAll(async () => {
  rmSync(DATA, { recursive: true, force: true });
  // SIGTERM, then SIGKILL after 5 s: a stuck agent must not hold the suite.
  await Promise.all(
    agents.map(
      (a) =>
        new Promise((r) => {
          if (a.child.exitCode !== null || a.child.signalCode !== null) return r(null);
          a.child.once('exit', r);
          a.child.kill('SIGTERM');
          setTimeout(() => a.child.kill('SIGKILL'), 5000).unref();
        }),
    ),
  );
});

function piic(iterations: number): ProjectDocument {
  const doc = JSON.parse(readFileSync(join(ROOT, 'examples/piic.json'), 'utf8')) as ProjectDocument;
  for (const n of doc.app.nodes) {
    n.params = { ...n.params, width: 64, height: 64 };
    if ('nb_loop' in n.params) n.params.nb_loop = 5;
  }
  doc.options = { ...doc.options, iterations };
  return doc;
}

function compileOrThrow(doc: ProjectDocument, overlap: boolean) {
  const r = compile(doc, { overlap });
  if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
  return r.ig;
}

let root: Root;
let host: HTMLDivElement;
let run: RunStore;
beforeEach(() => {
  host = document.createElement('div');
  document.body.appendChild(host);
  root = createRoot(host);
  run = createRunStore({ connect: wsConnect, publishMs: 50 });
});
afterEach(() => {
  act(() => root.unmount());
  host.remove();
  run.dispose();
});

/** Sets an input's value the way a user's typing does (React listens for the input event). */
function type(input: HTMLInputElement, value: string) {
  Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!.call(input, value);
  input.dispatchEvent(new Event('input', { bubbles: true }));
}

const q = (testid: string) => host.querySelector(`[data-testid="${testid}"]`) as HTMLElement;
// Waits on what the page shows, as long as a loaded machine takes (the tests' own limit is 3 min).
const until = async (ok: () => boolean, ms = 170_000) => {
  const t = Date.now();
  while (!ok()) {
    if (Date.now() - t > ms) throw new Error(`timed out; the agents' last lines:\n${agentLog.join('\n')}`);
    await act(() => new Promise((r) => setTimeout(r, 25)));
  }
};

describe('RunView', { timeout: 180_000 }, () => {
  const doc = piic(10);
  const compiled = { overlap: compileOrThrow(doc, true), noOverlap: compileOrThrow(doc, false) };
  const p = predict(doc);
  const prediction = p.ok ? p.prediction : null;

  it('shows the predicted plan of both strategies before any run, with Start disabled until connected', async () => {
    await act(async () =>
      root.render(<RunView document={doc} compiled={compiled} prediction={prediction} run={run} agents={[{ url: 'ws://127.0.0.1:1', token: 'T' }]} />),
    );
    expect(q('run-predicted').textContent).toContain('overlap');
    expect(q('run-predicted').textContent).toContain('no overlap');
    expect((q('run-start') as HTMLButtonElement).disabled).toBe(true);
    expect((q('run-urls') as HTMLInputElement).value).toBe('ws://127.0.0.1:1');
    expect(Number(q('timeline-lanes').dataset.lanes)).toBeGreaterThanOrEqual(4);
    expect(q('timeline-lanes').dataset.lanesWithEvents).toBe('0');
    expect(q('run-status').dataset.status).toBe('idle');
    // Iterations come from the document's run options; a half-typed count is kept, not applied.
    expect((q('run-iterations') as HTMLInputElement).value).toBe('10');
    await act(async () => type(q('run-iterations') as HTMLInputElement, ''));
    expect((q('run-iterations') as HTMLInputElement).value).toBe('');
    expect(run.store.getState().iterations).toBe(10);
    await act(async () => type(q('run-iterations') as HTMLInputElement, '75'));
    expect(run.store.getState().iterations).toBe(75);
  });

  it("while a run deploys, each host's step shows; the deploy time limit is none until set", async () => {
    await act(async () =>
      root.render(<RunView document={doc} compiled={compiled} prediction={prediction} run={run} agents={[{ url: 'ws://127.0.0.1:1', token: 'T' }]} />),
    );
    expect((q('run-deploy-timeout') as HTMLInputElement).value).toBe('');
    expect(run.store.getState().deployTimeout).toBe(0);
    await act(async () => type(q('run-deploy-timeout') as HTMLInputElement, '45'));
    expect(run.store.getState().deployTimeout).toBe(45);
    // What the store holds while the coordinator reports a deploy (store.test.ts: from real agents).
    const deploy = {
      elapsed: 3,
      hosts: [
        {
          host: 'h0',
          steps: [
            { step: 'kernels' as const, pe: 'gpu0@h0' },
            { step: 'device' as const, pe: 'cpu@h0' },
          ],
          deployed: false,
        },
        { host: 'h1', steps: [], deployed: true },
      ],
    };
    await act(async () => run.store.setState({ status: 'running', deploy }));
    const rows = [...host.querySelectorAll('[data-testid="run-deploy-progress"]')].map((r) => [
      (r as HTMLElement).dataset.host,
      (r as HTMLElement).dataset.step,
    ]);
    expect(rows).toEqual([
      ['h0', 'kernel preparation of gpu0@h0 and device set-up of cpu@h0'],
      ['h1', 'ready'],
    ]);
    expect(q('run-status').textContent).toBe('running: deploying…');
    await act(async () => run.store.setState({ deploy: { ...deploy, hosts: deploy.hosts.map((h) => ({ ...h, steps: [], deployed: true })) } }));
    expect(q('run-deploy-progress')).toBeNull();
    expect(q('run-status').textContent).toBe('running');
    await act(async () => run.store.setState({ status: 'idle', deploy: undefined }));
  });

  it('lists what each sink wrote (node, host, path, files, bytes, iterations) as the agents report it, after a failed run too', async () => {
    await act(async () =>
      root.render(<RunView document={doc} compiled={compiled} prediction={prediction} run={run} agents={[{ url: 'ws://127.0.0.1:1', token: 'T' }]} />),
    );
    expect(q('run-writes')).toBeNull();
    // What the store holds once a run's result carries the sinks' writes (RunResult.writes).
    const writes = [
      { node: 'maps', host: 'h0', pe: 'cpu1@h0', path: 'out:maps/%05d.png', bytes: 3 * 3200, files: 3, iterations: 3 },
      { node: 'estimate', host: 'h1', pe: 'cpu0@h1', path: 'out:estimate.npy', bytes: 16_512, files: 1, iterations: 10 },
    ];
    const result = { ok: true, seconds: 0.5, cycles: 10, reports: [], dropped: 0, writes };
    await act(async () => run.store.setState({ status: 'done', result }));
    const rows = [...host.querySelectorAll('[data-testid^="run-write-"]')].map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent));
    expect(rows).toEqual([
      ['maps', 'h0', 'out:maps/%05d.png', '3', '9.38 KiB', '3'],
      ['estimate', 'h1', 'out:estimate.npy', '1', '16.1 KiB', '10'],
    ]);
    expect(q('run-write-maps').querySelectorAll('td')[1].title).toBe('PE cpu1@h0');
    expect(q('run-write-estimate').querySelectorAll('td')[4].title).toBe('16512 bytes');
    await act(async () =>
      run.store.setState({ status: 'failed', failure: { host: 'h0', message: 'disk full' }, result: { ...result, ok: false, writes: writes.slice(0, 1) } }),
    );
    expect([...host.querySelectorAll('[data-testid^="run-write-"]')].map((r) => (r as HTMLElement).dataset.testid)).toEqual(['run-write-maps']);
    await act(async () => run.store.setState({ status: 'idle', failure: undefined, result: undefined }));
    expect(q('run-writes')).toBeNull();
  });

  it('after a run, lists what its sink wrote as the agent reported it', async () => {
    // A producer's matrix written by io.write each iteration into the agent's data root.
    const sinkDoc: ProjectDocument = {
      ...doc,
      app: {
        nodes: [
          { id: 'P', kernel: 'matrix.produce', params: { width: 16, height: 8 } },
          { id: 'S', kernel: 'io.write', params: { path: 'd:out/%02d.npy', when: 'each', kind: 'matrix', dtype: 'f32', shape: '8x16' } },
        ],
        edges: [{ from: { node: 'P', port: 'out' }, to: { node: 'S', port: 'in' } }],
      },
      mapping: { P: 'cpu@h0', S: 'cpu@h0' },
      options: { ...doc.options, iterations: 3 },
    };
    const sinkCompiled = { overlap: compileOrThrow(sinkDoc, true), noOverlap: compileOrThrow(sinkDoc, false) };
    const sinkPrediction = predict(sinkDoc);
    await act(async () =>
      root.render(
        <RunView
          document={sinkDoc}
          compiled={sinkCompiled}
          prediction={sinkPrediction.ok ? sinkPrediction.prediction : null}
          run={run}
          agents={agents.map((a) => ({ url: a.url, token: TOKEN }))}
        />,
      ),
    );
    await act(async () => q('run-connect').click());
    await until(() => q('run-connection').dataset.status === 'connected');
    await act(async () => q('run-start').click());
    await until(() => q('run-status').dataset.status === 'done');
    const cells = [...q('run-write-S').querySelectorAll('td')];
    // Each file: numpy's 128-byte header and 8 x 16 f32.
    expect(cells.map((td) => td.textContent)).toEqual(['S', 'h0', 'd:out/%02d.npy', '3', '1.88 KiB', '3']);
    expect(cells[4].title).toBe(`${3 * (128 + 8 * 16 * 4)} bytes`);
    expect(readdirSync(join(DATA, 'out')).sort()).toEqual(['00.npy', '01.npy', '02.npy']);
  });

  it('connects, runs P-I-I-C on two agents and reports the consumer check', async () => {
    await act(async () =>
      root.render(<RunView document={doc} compiled={compiled} prediction={prediction} run={run} agents={agents.map((a) => ({ url: a.url, token: TOKEN }))} />),
    );
    await act(async () => q('run-connect').click());
    await until(() => q('run-connection').dataset.status === 'connected');
    expect(q('run-agent-h0').textContent).toContain('gpu0@h0');
    // The agent's first core (it serves as many cpuK@h1 as it was given).
    expect(q('run-agent-h1').textContent).toContain('cpu0@h1');
    await act(async () => q('run-start').click());
    await until(() => q('run-status').dataset.status === 'done');
    expect(q('run-check').dataset.result).toBe('passed');
    expect(Number(q('timeline-canvas').dataset.events)).toBeGreaterThan(0);
    expect(Number(q('timeline-lanes').dataset.lanesWithEvents)).toBeGreaterThanOrEqual(5);
    expect(Number(q('run-throughput').dataset.value)).toBeGreaterThan(0);
    expect(q('run-utilisation').querySelectorAll('tr').length).toBe(run.measured().laneCount);
    expect(q('run-failure')).toBeNull();
  });

  it('a failed check names host, PE, node and iteration and keeps the trace so far', async () => {
    const ig = compileOrThrow(doc, true);
    // Deliberately wrong latency: the consumer fires a cycle before its input has arrived.
    ig.programs.fire.startCycle[ig.order.indexOf('C' as never)] -= 1;
    const broken = { overlap: ig, noOverlap: ig };
    await act(async () =>
      root.render(<RunView document={doc} compiled={broken} prediction={prediction} run={run} agents={agents.map((a) => ({ url: a.url, token: TOKEN }))} />),
    );
    await act(async () => q('run-connect').click());
    await until(() => q('run-connection').dataset.status === 'connected');
    await act(async () => q('run-start').click());
    await until(() => q('run-status').dataset.status === 'failed');
    const failure = q('run-failure').textContent!;
    expect(failure).toContain('Run failed on h1');
    expect(failure).toContain('PE cpu@h1');
    expect(failure).toContain('node C');
    expect(failure).toContain('iteration 0');
    expect(failure).toMatch(/expected 2/);
    expect(q('run-check').dataset.result).toBe('failed');
    expect(Number(q('timeline-canvas').dataset.events)).toBeGreaterThan(0);
    expect(q('run-export').textContent).toContain('Export trace');
  });

  it("Emulate link speeds: the run takes the time of the document's links", async () => {
    // 64x64 f32 = 16 KiB: PCIe at 1.6 MB/s takes 10 ms a copy, InfiniBand at 0.8 MB/s 20 ms.
    const slow = piic(10);
    for (const h of slow.arch.hosts) (h as { pcie?: unknown }).pcie = { bandwidth: 1.6384e6, latency: 0 };
    (slow.arch as { network?: unknown }).network = { kind: 'infiniband', bandwidth: 0.8192e6, latency: 0 };
    const slowCompiled = { overlap: compileOrThrow(slow, true), noOverlap: compileOrThrow(slow, false) };
    await act(async () =>
      root.render(
        <RunView document={slow} compiled={slowCompiled} prediction={prediction} run={run} agents={agents.map((a) => ({ url: a.url, token: TOKEN }))} />,
      ),
    );
    await act(async () => q('run-connect').click());
    await until(() => q('run-connection').dataset.status === 'connected');
    await act(async () => q('run-emulate-links').click());
    expect(run.store.getState().emulateLinks).toBe(true);
    await act(async () => q('run-start').click());
    await until(() => q('run-status').dataset.status === 'done');
    expect(q('run-check').dataset.result).toBe('passed');
    // Every copy in the trace the view holds lasted at least its link's time (µs).
    const transfers = run
      .measured()
      .toEvents()
      .filter((e) => e.kind === 'transfer');
    expect(transfers.length).toBe(10 * 6);
    for (const e of transfers) expect(e.end - e.start).toBeGreaterThanOrEqual(e.thread.split('@')[1] === e.pe.split('@')[1] ? 10_000 : 20_000);
  });

  it('Stop ends the run as stopped, not failed, and keeps the trace', async () => {
    await act(async () =>
      root.render(<RunView document={doc} compiled={compiled} prediction={prediction} run={run} agents={agents.map((a) => ({ url: a.url, token: TOKEN }))} />),
    );
    await act(async () => q('run-connect').click());
    await until(() => q('run-connection').dataset.status === 'connected');
    await act(async () => type(q('run-iterations') as HTMLInputElement, '100000'));
    await act(async () => q('run-start').click());
    await until(() => Number(q('timeline-canvas').dataset.events) > 20);
    await act(async () => q('run-stop').click());
    await until(() => q('run-status').dataset.status === 'stopped');
    expect(q('run-stopped').textContent).toContain('Stopped at cycle');
    expect(q('run-failure')).toBeNull();
    expect(q('run-check')).toBeNull();
    expect(Number(q('timeline-canvas').dataset.events)).toBeGreaterThan(20);
  });
});
