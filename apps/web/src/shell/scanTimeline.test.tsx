// @vitest-environment jsdom
import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TraceColumns, type TraceEvent, type WrittenDocument } from '@pipeloom/core';
import { findKernel } from '@pipeloom/kernels';
import { projectStore } from '../store/project.js';
import { emptyDocument } from '../document/documents.js';
import { Inspector } from './Inspector.js';
import { appRun, createRunStore } from '../store/run/store.js';
import { ScanTimeline, SLICE_COLORS } from '../scan/ScanTimeline.js';
import { clearScanHistory, followRuns, historyKey, scanHistory } from '../scan/history.js';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
HTMLCanvasElement.prototype.getContext = (() => null) as typeof HTMLCanvasElement.prototype.getContext;

/** src (8 mat.mulmod elements) -> scan1 (Kogge-Stone) on the first `p` of two CPUs. */
function doc(p: number): WrittenDocument {
  const d = emptyDocument();
  const hosts = [0, 1].map((i) => ({ id: `h${i}`, position: { x: i * 200, y: 0 } }));
  const pes = hosts.map((h) => ({ id: `cpu@${h.id}`, host: h.id, kind: 'cpu' as const, memory: 2 ** 30, position: { x: 20, y: 40 } }));
  return {
    ...d,
    arch: { hosts, pes, links: [] },
    app: {
      nodes: [
        { id: 'src', kernel: 'scan.source', params: { operator: 'mat.mulmod', count: 8, k: 3 } },
        {
          id: 'scan1',
          type: 'scan',
          params: { operator: 'mat.mulmod', network: 'kogge-stone', output: 'inclusive', strategy: 'scan-then-propagate', execution: 'eager', k: 3 },
        },
      ],
      edges: [{ from: { node: 'src', port: 'out' }, to: { node: 'scan1', port: 'in' } }],
    },
    mapping: { src: 'cpu@h0', scan1: pes.slice(0, p).map((x) => x.id) },
  };
}

const fire = (node: string, pe: string, iteration: number, start: number, end: number): TraceEvent => ({
  host: pe.split('@')[1],
  pe,
  thread: 'main',
  kind: 'fire',
  name: node,
  node,
  iteration,
  cycle: iteration,
  start,
  end,
});

/** Two iterations of the scan on two workers, w0 slow (as lanes.test.ts's), in µs. */
const twoWorkers = (): TraceEvent[] =>
  [0, 1].flatMap((it) => {
    const t = it * 100_000;
    return [
      fire('scan1/local.w0', 'cpu@h0', it, t, t + 5000),
      fire('scan1/local.w1', 'cpu@h1', it, t, t + 3000),
      fire('scan1/ks.r1.w1', 'cpu@h1', it, t + 5000, t + 6000),
      fire('scan1/prop.w1', 'cpu@h1', it, t + 6000, t + 9000),
    ];
  });
/** One worker: its scan of 8 in 7 ms. */
const oneWorker = (): TraceEvent[] => [0, 1].map((it) => fire('scan1/local.w0', 'cpu@h0', it, it * 100_000, it * 100_000 + 7000));

let root: Root;
let host: HTMLDivElement;
beforeEach(() => {
  host = document.createElement('div');
  document.body.appendChild(host);
  root = createRoot(host);
  clearScanHistory();
  appRun.reset();
});
afterEach(() => {
  act(() => root.unmount());
  host.remove();
  appRun.store.setState({ ran: undefined });
});

const q = (testid: string) => host.querySelector(`[data-testid="${testid}"]`) as HTMLElement | null;
const all = (sel: string) => [...host.querySelectorAll(sel)] as HTMLElement[];
const mulmod = findKernel('mat.mulmod')!;

function render(d: WrittenDocument) {
  act(() =>
    root.render(
      <ScanTimeline
        id="scan1"
        doc={d}
        N={8}
        p={2}
        network="kogge-stone"
        strategy="scan-then-propagate"
        output="inclusive"
        execution="eager"
        pes={['cpu@h0', 'cpu@h1']}
        operator={mulmod}
        own={{ k: 3 }}
        onClose={() => {}}
      />,
    ),
  );
}

describe('the scan timeline view', () => {
  it('with no run: (a) alone, from the cost hint, a lane per worker, and what a run would add', () => {
    render(doc(2));
    expect(q('scan-timeline')!.dataset.bands).toBe('1');
    expect(q('scan-band-mean')!.dataset.lanes).toBe('2');
    expect(q('scan-band-replay')).toBeNull();
    expect(q('scan-makespan-mean')!.textContent).toMatch(/\(a\) simulated, mean cost: makespan .* \(the operator's cost hint: .* per application/);
    expect(q('scan-timeline-note')!.textContent).toMatch(/No run of the document as it is yet/);
    expect(q('scan-lane-mean-1')!.textContent).toContain('w1 cpu@h1');
    // The two hosts are not linked: messages cannot be costed, and the legend says so.
    expect(q('scan-timeline-messages')!.textContent).toBe(
      'Messages cost nothing in the simulations: no route from cpu@h0 to cpu@h1 in the architecture graph (link them in Architecture).',
    );
  });

  it("with the hosts linked, (a) sends w0's block total over the link: its makespan grows by that one message", () => {
    const free = (render(doc(2)), Number(q('scan-makespan-mean')!.dataset.seconds));
    const d = doc(2);
    const linked = { ...d, arch: { ...d.arch, links: [{ a: 'cpu@h0', b: 'cpu@h1', kind: 'ethernet' as const, latency: 5e-5, bandwidth: 1e8, duplex: true }] } };
    render(linked);
    // w1's network application waits for w0's total (3 applications each; then 1 + 3 on w1's
    // chain): one message of 44 bytes, 50 µs + 0.44 µs, before the chain's last four.
    expect(Number(q('scan-makespan-mean')!.dataset.seconds) - free).toBeCloseTo(5e-5 + 44 / 1e8, 12);
    expect(q('scan-timeline-messages')!.dataset.elementBytes).toBe('44');
    expect(q('scan-timeline-messages')!.textContent).toContain('one element of 44 B, 50.44 µs cpu@h0 → cpu@h1');
  });

  it('after a run: three bands with a lane per worker, stages in their colours, the critical path outlined, three makespans', () => {
    const d = doc(2);
    appRun.ingest(twoWorkers());
    appRun.store.setState({ ran: appRun.store.getState().seen });
    appRun.publish();
    render(d);
    expect(q('scan-timeline')!.dataset.bands).toBe('3');
    for (const b of ['mean', 'replay', 'measured']) {
      expect(q(`scan-band-${b}`)!.dataset.lanes).toBe('2');
      expect(q(`scan-lane-${b}-0`)).not.toBeNull();
    }
    // Busy 12 ms over 2 x 10 applications: 1.2 ms each; w1's chain of 7 applications is (a)'s 8.4 ms; (b) and (c) 9 ms.
    const ms = (b: string) => Number(q(`scan-makespan-${b}`)!.dataset.seconds) * 1e3;
    expect(ms('mean')).toBeCloseTo(8.4, 9);
    expect(ms('replay')).toBeCloseTo(9, 9);
    expect(ms('measured')).toBeCloseTo(9, 9);
    expect(q('scan-makespan-mean')!.textContent).toContain('calibrated from the last run: 1.20 ms per application');
    // Stage colours per node, the wait grey, the critical path outlined in the simulations only.
    const rect = (band: string, node: string) => q(`scan-lane-${band}-${node.endsWith('0') ? 0 : 1}`)!.querySelector(`rect[data-node="${node}"]`)!;
    expect(rect('replay', 'local.w0').getAttribute('fill')).toBe(SLICE_COLORS.local);
    expect(rect('replay', 'ks.r1.w1').getAttribute('fill')).toBe(SLICE_COLORS.network);
    expect(rect('replay', 'prop.w1').getAttribute('fill')).toBe(SLICE_COLORS.prop);
    expect(q('scan-lane-measured-1')!.querySelector('rect[data-kind="wait"]')!.getAttribute('fill')).toBe(SLICE_COLORS.wait);
    expect(q('scan-lane-measured-0')!.querySelector('rect[data-kind="idle"]')).not.toBeNull();
    expect(all('[data-testid="scan-band-replay"] rect[data-critical]').map((r) => r.dataset.node)).toEqual(['local.w0', 'ks.r1.w1', 'prop.w1']);
    expect(all('[data-testid="scan-band-measured"] rect[data-critical]')).toEqual([]);
  });
});

describe('measured speedups across runs', () => {
  it('each run that ends done records its point under its scan and settings; the chart draws every one, the latest filled', () => {
    const run = createRunStore();
    let d = doc(1);
    const stop = followRuns(run, () => d);
    const once = (events: TraceEvent[]) => {
      run.reset();
      run.store.setState({ status: 'running' });
      run.ingest(events);
      run.store.setState({ ran: run.store.getState().seen, status: 'done' });
    };
    once(oneWorker());
    d = doc(2);
    once(twoWorkers());
    // A run whose checks failed is not a measurement.
    run.store.setState({ status: 'running' });
    run.store.setState({ status: 'failed' });
    stop();
    const key = historyKey('scan1', { N: 8, network: 'kogge-stone', strategy: 'scan-then-propagate', output: 'inclusive', execution: 'eager' });
    const points = scanHistory.getState().points[key];
    expect(points.map((x) => [x.run, x.p])).toEqual([
      [1, 1],
      [2, 2],
    ]);
    // p = 1: (N - 1) c / span = 7 c / 7 c = 1. p = 2: c = 1.2 ms, span 9 ms: 7 x 1.2 / 9.
    expect(points[0].speedup).toBeCloseTo(1, 9);
    expect(points[1].speedup).toBeCloseTo(8.4 / 9, 9);

    // The inspector's chart: both runs at their p (no run is current in appRun: both are earlier runs).
    projectStore.getState().load(doc(2));
    projectStore.getState().select({ kind: 'node', id: 'scan1' });
    act(() => root.render(<Inspector />));
    const marks = all('[data-testid="scan-chart-measured"]');
    expect(marks.map((m) => [m.dataset.p, m.dataset.latest])).toEqual([
      ['1', 'false'],
      ['2', 'true'],
    ]);
    expect(q('scan-measured-history')!.textContent).toContain('Earlier runs: 1 at p = 1, 0.93 at p = 2');
    act(() => q('scan-timeline-open')!.click());
    expect(q('scan-timeline')).not.toBeNull();
    act(() => q('scan-timeline-close')!.click());
    expect(q('scan-timeline')).toBeNull();
    // Another network is another key: nothing recorded under it.
    const select = q('scan-network') as HTMLSelectElement;
    act(() => {
      select.value = 'sklansky';
      select.dispatchEvent(new Event('change', { bubbles: true }));
    });
    expect(all('[data-testid="scan-chart-measured"]')).toEqual([]);
    // The edit is undone: the points are still there.
    act(() => projectStore.getState().undo());
    expect(all('[data-testid="scan-chart-measured"]')).toHaveLength(2);
  });
});
