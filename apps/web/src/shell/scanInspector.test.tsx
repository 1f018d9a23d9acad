// @vitest-environment jsdom
import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defineKernelSpec, registerKernels, scanElementType } from '@pipeloom/kernels';
import type { WrittenDocument } from '@pipeloom/core';
import { projectStore } from '../store/project.js';
import { emptyDocument } from '../document/documents.js';
import { Inspector } from './Inspector.js';
import { Palette } from '../dfg/Palette.js';
import { MappingPanel } from '../mapping/MappingPanel.js';
import { connectionProblem } from '../document/kernels.js';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
// jsdom has no 2D canvas: its getContext logs "not implemented" and returns null; return null quietly.
HTMLCanvasElement.prototype.getContext = (() => null) as typeof HTMLCanvasElement.prototype.getContext;

// A source of N mat.mulmod elements (k = 3: 2 + 9 words), registered as a package kernel: no
// built-in makes scan elements yet, and N comes from what feeds the scan.
beforeAll(() => {
  registerKernels(
    [
      defineKernelSpec({
        id: 'webtest.elements',
        version: '1.0.0',
        description: 'N elements of 3 x 3 matrices',
        params: { n: { type: 'int', default: 40, min: 1, max: 4096, description: 'Elements' } },
        inputs: [],
        outputs: [{ name: 'out', type: (p) => scanElementType(Number(p.n), 9) }],
        cost: () => ({ flops: 1, bytes: 0 }),
      }),
    ],
    'webtest',
  );
});

/** Eight hosts of one CPU each. */
function eightPes(): WrittenDocument {
  const d = emptyDocument();
  const hosts = Array.from({ length: 8 }, (_, i) => ({ id: `h${i}`, position: { x: i * 200, y: 0 } }));
  const pes = hosts.map((h) => ({ id: `cpu@${h.id}`, host: h.id, kind: 'cpu' as const, memory: 2 ** 30, position: { x: 20, y: 40 } }));
  return { ...d, arch: { hosts, pes, links: [] } };
}

let root: Root;
let host: HTMLDivElement;
beforeEach(() => {
  host = document.createElement('div');
  document.body.appendChild(host);
  root = createRoot(host);
  projectStore.getState().load(eightPes());
});
afterEach(() => {
  act(() => root.unmount());
  host.remove();
});

const q = (testid: string) => host.querySelector(`[data-testid="${testid}"]`) as HTMLElement | null;
const text = (testid: string) => q(testid)?.textContent ?? '';
const pick = (testid: string, value: string) => {
  const s = q(testid) as HTMLSelectElement;
  act(() => {
    s.value = value;
    s.dispatchEvent(new Event('change', { bubbles: true }));
  });
};
const scanNode = () => projectStore.getState().doc.app.nodes.find((n) => n.type === 'scan')!;

describe('the scan node in the designer', () => {
  it("the palette's Scan entry adds a scan node with its defaults (mat.mulmod, kogge-stone, inclusive, scan-then-propagate, eager) and selects it; one undo removes it", () => {
    act(() => root.render(<Palette />));
    act(() => q('palette-scan')!.click());
    const n = scanNode();
    expect(n).toMatchObject({
      id: 'scan',
      type: 'scan',
      params: { operator: 'mat.mulmod', network: 'kogge-stone', output: 'inclusive', strategy: 'scan-then-propagate', execution: 'eager', k: 3 },
    });
    expect(n.kernel).toBeUndefined();
    expect(projectStore.getState().selection).toEqual({ kind: 'node', id: 'scan' });
    act(() => projectStore.getState().undo());
    expect(projectStore.getState().doc.app.nodes).toHaveLength(0);
  });

  it('the model follows the network and the workers: Kogge-Stone at p = 8 has 17 network applications in 3 levels, Blelloch 14 (11 fired) in 6; undo brings Kogge-Stone back', () => {
    const doc = eightPes();
    projectStore.getState().load({
      ...doc,
      app: {
        nodes: [
          {
            id: 'scan1',
            type: 'scan',
            params: { operator: 'mat.mulmod', network: 'kogge-stone', output: 'inclusive', strategy: 'scan-then-propagate', execution: 'eager', k: 3 },
          },
        ],
        edges: [],
      },
      mapping: { scan1: doc.arch.pes.map((p) => p.id) },
    });
    projectStore.getState().select({ kind: 'node', id: 'scan1' });
    act(() => root.render(<Inspector />));
    expect(text('scan-p')).toContain('p = 8');
    expect(text('scan-network-part')).toContain('17 applications (17 fired) in 3 levels');
    // N = 64 on 8 workers: w3 scans 24…31 (7 applications), fires Kogge-Stone's levels 1 and 2
    // (it holds [0, 3] after level 2), propagates 7 (Algorithm 9: its last is the network's), sends 4, receives 3.
    const cells = [...q('scan-worker-3')!.querySelectorAll('td')].map((c) => c.textContent);
    expect(cells).toEqual(['w3', '24…31', '7', '2', '7', '4', '3']);
    const ks = { work: text('scan-work'), span: text('scan-span'), speedup: text('scan-speedup') };
    pick('scan-network', 'blelloch');
    expect(scanNode().params?.network).toBe('blelloch');
    expect(text('scan-network-part')).toContain('14 applications (11 fired) in 6 levels');
    expect({ work: text('scan-work'), span: text('scan-span'), speedup: text('scan-speedup') }).not.toEqual(ks);
    act(() => projectStore.getState().undo());
    expect(scanNode().params?.network).toBe('kogge-stone');
    expect(text('scan-network-part')).toContain('17 applications (17 fired) in 3 levels');
  });

  it('N comes from what feeds in; a producer of other data is refused naming what the scan takes', () => {
    const doc = eightPes();
    projectStore.getState().load({
      ...doc,
      app: {
        nodes: [
          { id: 'src', kernel: 'webtest.elements', params: { n: 40 } },
          { id: 'm', kernel: 'matrix.produce', params: { width: 8, height: 8 } },
          { id: 'scan1', type: 'scan', params: { operator: 'mat.mulmod', network: 'sklansky', k: 3 } },
        ],
        edges: [{ from: { node: 'src', port: 'out' }, to: { node: 'scan1', port: 'in' } }],
      },
      mapping: { scan1: ['cpu@h0', 'cpu@h1', 'cpu@h2', 'cpu@h3'] },
    });
    projectStore.getState().select({ kind: 'node', id: 'scan1' });
    act(() => root.render(<Inspector />));
    expect(text('scan-n')).toContain('N = 40');
    expect(q('scan-model-n')).toBeNull();
    expect(text('scan-worker-3')).toMatch(/^w330…39/);
    const d = projectStore.getState().doc;
    const withoutEdge = { ...d, app: { ...d.app, edges: [] } };
    expect(connectionProblem(withoutEdge, { node: 'src', port: 'out' }, { node: 'scan1', port: 'in' })).toBeNull();
    expect(connectionProblem(withoutEdge, { node: 'm', port: 'out' }, { node: 'scan1', port: 'in' })).toMatch(
      /scan1\.in takes N scan elements of mat\.mulmod, scan-element<u32>\[N×11\], not /,
    );
    // With k = 4 the elements are 18 words: src's 11 no longer fit.
    expect(
      connectionProblem(
        {
          ...withoutEdge,
          app: { ...withoutEdge.app, nodes: withoutEdge.app.nodes.map((n) => (n.id === 'scan1' ? { ...n, params: { ...n.params, k: 4 } } : n)) },
        },
        { node: 'src', port: 'out' },
        { node: 'scan1', port: 'in' },
      ),
    ).toMatch(/N×18/);
  });

  it('with nothing feeding in, the model takes its own N; more workers than elements says so instead of a model', () => {
    const doc = eightPes();
    projectStore.getState().load({
      ...doc,
      app: { nodes: [{ id: 'scan1', type: 'scan', params: { operator: 'mat.mulmod', network: 'serial', k: 3 } }], edges: [] },
      mapping: { scan1: doc.arch.pes.map((p) => p.id) },
    });
    projectStore.getState().select({ kind: 'node', id: 'scan1' });
    act(() => root.render(<Inspector />));
    const n = q('scan-model-n') as HTMLInputElement;
    expect(n.value).toBe('64');
    const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!;
    act(() => {
      n.focus();
      setter.call(n, '5');
      n.dispatchEvent(new Event('input', { bubbles: true }));
    });
    expect(text('scan-model-problem')).toContain('8 workers for 5 elements');
    expect(q('scan-model')).toBeNull();
    // The model's N is a view setting: the document is unchanged.
    expect(projectStore.getState().doc.app.nodes[0].params).toEqual({ operator: 'mat.mulmod', network: 'serial', k: 3 });
  });

  it('workers are ticked in order on the mapping board, ↑ moves one earlier; each is one undo step', () => {
    projectStore.getState().load({ ...eightPes(), app: { nodes: [{ id: 'scan1', type: 'scan', params: { operator: 'scan.range' } }], edges: [] } });
    act(() => root.render(<MappingPanel />));
    const tick = (pe: string) => act(() => (q(`map-pes-scan1-${pe}`) as HTMLInputElement).click());
    tick('cpu@h5');
    tick('cpu@h2');
    tick('cpu@h7');
    expect(projectStore.getState().doc.mapping.scan1).toEqual(['cpu@h5', 'cpu@h2', 'cpu@h7']);
    // The list is shown in worker order.
    const labels = [...q('map-pes-scan1')!.querySelectorAll('label')].slice(0, 3).map((l) => l.textContent);
    expect(labels).toEqual([' cpu@h5 w0', ' cpu@h2 w1↑', ' cpu@h7 w2↑']);
    act(() => q('map-pes-scan1-cpu@h7-up')!.click());
    expect(projectStore.getState().doc.mapping.scan1).toEqual(['cpu@h5', 'cpu@h7', 'cpu@h2']);
    act(() => projectStore.getState().undo());
    expect(projectStore.getState().doc.mapping.scan1).toEqual(['cpu@h5', 'cpu@h2', 'cpu@h7']);
    tick('cpu@h5');
    expect(projectStore.getState().doc.mapping.scan1).toEqual(['cpu@h2', 'cpu@h7']);
  });

  it("switching the operator keeps the scan's params and sets the new operator's own; one undo restores them", () => {
    const doc = eightPes();
    projectStore.getState().load({
      ...doc,
      app: { nodes: [{ id: 'scan1', type: 'scan', params: { operator: 'mat.mulmod', network: 'brent-kung', output: 'exclusive', k: 5 } }], edges: [] },
      mapping: { scan1: 'cpu@h0' },
    });
    projectStore.getState().select({ kind: 'node', id: 'scan1' });
    act(() => root.render(<Inspector />));
    expect((q('param-k') as HTMLInputElement).value).toBe('5');
    const options = [...(q('scan-operator') as HTMLSelectElement).options].map((o) => o.value);
    expect(options).toEqual(expect.arrayContaining(['scan.range', 'mat.mulmod']));
    expect(options).not.toContain('matrix.produce');
    pick('scan-operator', 'scan.range');
    expect(scanNode().params).toEqual({ operator: 'scan.range', network: 'brent-kung', output: 'exclusive' });
    expect(q('param-k')).toBeNull();
    act(() => projectStore.getState().undo());
    expect(scanNode().params).toEqual({ operator: 'mat.mulmod', network: 'brent-kung', output: 'exclusive', k: 5 });
  });

  it('Expand draws the plan (its canvas labelled with what it holds), and the chart has a curve per network with this p marked', () => {
    const doc = eightPes();
    projectStore.getState().load({
      ...doc,
      app: { nodes: [{ id: 'scan1', type: 'scan', params: { operator: 'mat.mulmod', network: 'blelloch', k: 3 } }], edges: [] },
      mapping: { scan1: doc.arch.pes.map((p) => p.id) },
    });
    projectStore.getState().select({ kind: 'node', id: 'scan1' });
    act(() => root.render(<Inspector />));
    for (const n of ['serial', 'kogge-stone', 'sklansky', 'brent-kung', 'blelloch'])
      expect(q(`scan-chart-${n}`)!.getAttribute('points')!.split(' ').length).toBe(32);
    expect(q('scan-chart-current')).not.toBeNull();
    expect(q('scan-chart-measured')).toBeNull();
    expect(q('scan-expand')).toBeNull();
    act(() => q('scan-expand-open')!.click());
    const canvas = q('scan-figure')!;
    expect(canvas.getAttribute('aria-label')).toMatch(/blelloch scan of 64 elements on 8 workers.*network 6 levels, \d+ applications fired, 3 free/);
    act(() => q('scan-expand-close')!.click());
    expect(q('scan-expand')).toBeNull();
  });
});
