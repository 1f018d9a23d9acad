// @vitest-environment jsdom
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { projectStore } from '../store/project.js';
import { emptyDocument } from '../document/documents.js';
import { compileStore } from '../store/compiler.js';
import { Problems } from './Problems.js';
import { Inspector } from './Inspector.js';
import { MappingPanel } from '../mapping/MappingPanel.js';
import type { ProjectDocument } from '@pipeloom/core';
import { readDocument } from '../document/documents.js';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const doc: ProjectDocument = {
  ...emptyDocument(),
  app: {
    nodes: [
      { id: 'p', kernel: 'matrix.produce', params: { width: 64, height: 64 } },
      { id: 'c', kernel: 'matrix.consume', params: { width: 64, height: 64 } },
    ],
    edges: [{ from: { node: 'p', port: 'out' }, to: { node: 'c', port: 'in' } }],
  },
  mapping: { p: 'cpu@h0' },
};

let root: Root;
let host: HTMLDivElement;
beforeEach(() => {
  host = document.createElement('div');
  document.body.appendChild(host);
  root = createRoot(host);
  projectStore.getState().load(doc);
  projectStore.getState().setView('ig');
});
afterEach(() => {
  act(() => root.unmount());
  host.remove();
});

const q = (testid: string) => host.querySelector(`[data-testid="${testid}"]`) as HTMLElement | null;

/** Types into a React-controlled input the way a user does. */
function type(input: HTMLInputElement, value: string) {
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!;
  act(() => {
    if (document.activeElement !== input) input.focus();
    setter.call(input, value);
    input.dispatchEvent(new Event('input', { bubbles: true }));
  });
}

describe('Problems list', () => {
  it('clicking a problem selects the element it names and opens its view', () => {
    compileStore.setState({
      status: 'idle',
      revision: 1,
      result: {
        diagnostics: [
          { path: 'mapping', message: 'node "c" is not mapped', hint: 'add "c": "<PE id>" to mapping', severity: 'error' },
          { path: 'app.edges[0]', message: 'type mismatch', severity: 'error' },
        ],
        overlap: null,
        noOverlap: null,
        prediction: null,
        compileMs: 1,
        ms: 2,
      },
    });
    act(() => root.render(<Problems />));
    expect(q('problem-count')!.textContent).toBe('2 errors, 0 warnings');
    const rows = host.querySelectorAll<HTMLElement>('[data-testid="problem"]');
    act(() => rows[0].click());
    expect(projectStore.getState().selection).toEqual({ kind: 'mapping', node: 'c' });
    expect(projectStore.getState().view).toBe('mapping');
    act(() => rows[1].click());
    expect(projectStore.getState().selection).toEqual({ kind: 'edge', key: 'p.out->c.in' });
    expect(projectStore.getState().view).toBe('dfg');
  });
});

describe('Inspector', () => {
  it('an out-of-range param is flagged in place and not applied; a typing burst is one undo step', () => {
    projectStore.getState().select({ kind: 'node', id: 'p' });
    act(() => root.render(<Inspector />));
    const width = q('param-width') as HTMLInputElement;
    expect(width.value).toBe('64');
    type(width, '0');
    expect(q('param-width-error')!.textContent).toContain('at least 1');
    expect(projectStore.getState().doc.app.nodes[0].params?.width).toBe(64);
    type(width, '1');
    type(width, '12');
    type(width, '128');
    expect(projectStore.getState().doc.app.nodes[0].params?.width).toBe(128);
    act(() => width.dispatchEvent(new FocusEvent('focusout', { bubbles: true })));
    act(() => projectStore.getState().undo());
    expect(projectStore.getState().doc.app.nodes[0].params?.width).toBe(64);
  });

  it('a source shows the file it reads as written and its shape; a sink where its shape comes from', () => {
    const io: ProjectDocument = {
      ...doc,
      app: {
        nodes: [
          { id: 'clip', kernel: 'io.read', params: { path: 'videos:clip.y4m', shape: '48x64' } },
          { id: 'maps', kernel: 'io.write', params: { path: 'out:maps/%05d.png' } },
        ],
        edges: [],
      },
      mapping: {},
    };
    projectStore.getState().load(io);
    projectStore.getState().select({ kind: 'node', id: 'clip' });
    act(() => root.render(<Inspector />));
    expect(q('inspector-io-file')!.textContent).toBe('Reads videos:clip.y4m');
    expect(q('inspector-io-shape')!.textContent).toBe('Shape 48x64');
    expect(host.textContent).toContain('the directory it serves as "videos" (pipeloom agent --data videos=DIR)');
    act(() => projectStore.getState().select({ kind: 'node', id: 'maps' }));
    expect(q('inspector-io-file')!.textContent).toBe('Writes out:maps/%05d.png');
    expect(q('inspector-io-shape')!.textContent).toBe('Shape from its input');
  });

  it('a host of several CPU PEs edits the memory they share; a host of one CPU has no such field', () => {
    projectStore
      .getState()
      .load(readDocument(JSON.stringify({ ...doc, arch: { hosts: [{ id: 'h0', cpus: 4 }, { id: 'h1' }], pes: [], links: [] }, mapping: {} })).doc!);
    projectStore.getState().select({ kind: 'host', id: 'h0' });
    act(() => root.render(<Inspector />));
    const field = q('inspector-cpu-memory') as HTMLInputElement;
    expect(field.value).toBe('64');
    type(field, '2');
    expect(projectStore.getState().doc.arch.hosts[0].cpuMemory).toBe(2 * 2 ** 30);
    act(() => projectStore.getState().select({ kind: 'host', id: 'h1' }));
    expect(q('inspector-cpu-memory')).toBeNull();
  });

  it('a custom WGSL node edits its source in a multi-line box, committed on blur as one step', () => {
    projectStore.getState().load({ ...doc, app: { nodes: [{ id: 'k', kernel: 'custom.wgsl', params: { length: 64 } }], edges: [] }, mapping: {} });
    projectStore.getState().select({ kind: 'node', id: 'k' });
    act(() => root.render(<Inspector />));
    const box = q('param-source') as HTMLTextAreaElement;
    expect(box.tagName).toBe('TEXTAREA');
    expect(box.value).toContain('fn main');
    const setter = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value')!.set!;
    const source = box.value.replace('* 2.0', '* 3.0');
    act(() => {
      box.focus();
      setter.call(box, source);
      box.dispatchEvent(new Event('input', { bubbles: true }));
    });
    act(() => box.dispatchEvent(new FocusEvent('focusout', { bubbles: true })));
    expect(projectStore.getState().doc.app.nodes[0].params?.source).toBe(source);
  });

  it('the run options switch to task bag with window and prefetch (a number or unbounded), each an undo step; the mapping says it is not used', () => {
    projectStore.getState().select(null);
    act(() =>
      root.render(
        <>
          <Inspector />
          <MappingPanel />
        </>,
      ),
    );
    expect(q('option-window')).toBeNull();
    expect(q('mapping-unused')).toBeNull();
    const mode = q('option-mode') as HTMLSelectElement;
    const choose = (value: string) =>
      act(() => {
        mode.value = value;
        mode.dispatchEvent(new Event('change', { bubbles: true }));
      });
    choose('taskbag');
    const options = () => projectStore.getState().doc.options;
    expect(options().mode).toBe('taskbag');
    expect((q('option-window') as HTMLInputElement).value).toBe('2');
    expect((q('option-prefetch') as HTMLInputElement).value).toBe('2');
    expect(q('mapping-unused')!.textContent).toContain('Not used in task-bag mode');
    // The mapping is kept, not hidden.
    expect(q('map-chip-p')).not.toBeNull();
    type(q('option-window') as HTMLInputElement, '65');
    expect(q('option-window-error')!.textContent).toContain('at most 64');
    type(q('option-window') as HTMLInputElement, '4');
    act(() => q('option-window')!.dispatchEvent(new FocusEvent('focusout', { bubbles: true })));
    expect(options().window).toBe(4);
    act(() => (q('option-prefetch-unbounded') as HTMLInputElement).click());
    expect(options().prefetch).toBe('unbounded');
    expect(q('option-prefetch')).toBeNull();
    // Back to static keeps window and prefetch; undo walks back one edit at a time.
    choose('static');
    expect(options()).toMatchObject({ mode: 'static', window: 4, prefetch: 'unbounded' });
    expect(q('mapping-unused')).toBeNull();
    act(() => projectStore.getState().undo());
    expect(options().mode).toBe('taskbag');
    act(() => projectStore.getState().undo());
    expect(options().prefetch).toBeUndefined();
    act(() => projectStore.getState().undo());
    expect(options().window).toBeUndefined();
    act(() => projectStore.getState().undo());
    expect(options().mode).toBeUndefined();
    expect(projectStore.getState().doc.mapping).toEqual({ p: 'cpu@h0' });
  });

  it('the PE picker maps the selected node', () => {
    projectStore.getState().select({ kind: 'node', id: 'c' });
    act(() => root.render(<Inspector />));
    const pick = q('inspector-pe') as HTMLSelectElement;
    act(() => {
      pick.value = 'cpu@h0';
      pick.dispatchEvent(new Event('change', { bubbles: true }));
    });
    expect(projectStore.getState().doc.mapping).toEqual({ p: 'cpu@h0', c: 'cpu@h0' });
  });

  it('renaming a node follows it everywhere and keeps it selected', () => {
    projectStore.getState().select({ kind: 'node', id: 'p' });
    act(() => root.render(<Inspector />));
    const id = q('inspector-id') as HTMLInputElement;
    type(id, 'P');
    act(() => id.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true })));
    const d = projectStore.getState().doc;
    expect(d.app.edges[0].from.node).toBe('P');
    expect(d.mapping).toEqual({ P: 'cpu@h0' });
    expect(projectStore.getState().selection).toEqual({ kind: 'node', id: 'P' });
  });
});

describe('tasks and PE lists (MLEM)', () => {
  const mlem = () => readDocument(readFileSync(join(process.cwd(), 'examples', 'mlem.json'), 'utf8')).doc!; // jsdom's URL resolves no file: paths; tests run from the root
  const tasks = () => projectStore.getState().doc.app.nodes.find((n) => n.id === 'projbp')?.tasks;
  const click = (el: HTMLElement) => act(() => el.click());
  const blur = (el: HTMLElement) => act(() => el.dispatchEvent(new FocusEvent('focusout', { bubbles: true })));

  it("a split node has a Tasks field checked as typed in core's words; a burst is one undo step", () => {
    projectStore.getState().load(mlem());
    projectStore.getState().select({ kind: 'node', id: 'projbp' });
    act(() => root.render(<Inspector />));
    const field = q('inspector-tasks') as HTMLInputElement;
    expect(field.value).toBe('K');
    expect(q('inspector-tasks-value')!.textContent).toContain('= 4');
    expect(q('inspector-tasks-doc')!.textContent).toContain('(1 … 36)');
    // With tasks, the split's own params are not offered.
    expect(q('param-shares')).toBeNull();
    type(field, '200');
    expect(q('inspector-tasks-error')!.textContent).toBe(
      'tasks 200 > angles 36: each share needs at least one of its angles (lower tasks to 36 or fewer, or raise angles)',
    );
    expect(tasks()).toBe('K');
    type(field, '0');
    expect(q('inspector-tasks-error')!.textContent).toContain('tasks 0 is not a whole number of tasks, 1 or more');
    type(field, '');
    expect(q('inspector-tasks-error')!.textContent).toContain('enter a number');
    expect(tasks()).toBe('K');
    type(field, '1');
    type(field, '12');
    expect(tasks()).toBe(12);
    blur(field);
    act(() => projectStore.getState().undo());
    expect(tasks()).toBe('K');
  });

  it('Remove tasks turns the PE list back to its first PE in one undo step; the field then adds tasks again', () => {
    const doc = mlem();
    projectStore.getState().load(doc);
    projectStore.getState().select({ kind: 'node', id: 'projbp' });
    act(() => root.render(<Inspector />));
    expect((q('inspector-pes-gpu0@h0') as HTMLInputElement).checked).toBe(true);
    expect((q('inspector-pes-cpu@h0') as HTMLInputElement).checked).toBe(true);
    click(q('inspector-tasks-remove')!);
    expect(tasks()).toBeUndefined();
    expect(projectStore.getState().doc.mapping.projbp).toBe('gpu0@h0');
    // Without tasks: one PE, picked, no checkboxes; the split's params are back.
    expect(q('inspector-pes')).toBeNull();
    expect((q('inspector-pe') as HTMLSelectElement).value).toBe('gpu0@h0');
    expect(q('param-shares')).not.toBeNull();
    act(() => projectStore.getState().undo());
    expect(projectStore.getState().doc).toEqual(doc);
    act(() => projectStore.getState().redo());
    type(q('inspector-tasks') as HTMLInputElement, '3');
    expect(tasks()).toBe(3);
    expect(projectStore.getState().doc.mapping.projbp).toBe('gpu0@h0');
  });

  it('ticking PEs of a node with tasks appends to its list, unticking drops; each is an undo step', () => {
    projectStore.getState().load(mlem());
    projectStore.getState().dispatch({ type: 'pe/add', pe: { id: 'gpu1@h0', host: 'h0', kind: 'gpu', memory: 2 ** 30 } });
    projectStore.getState().select({ kind: 'node', id: 'projbp' });
    act(() => root.render(<Inspector />));
    click(q('inspector-pes-gpu1@h0')!);
    expect(projectStore.getState().doc.mapping.projbp).toEqual(['gpu0@h0', 'cpu@h0', 'gpu1@h0']);
    click(q('inspector-pes-gpu0@h0')!);
    expect(projectStore.getState().doc.mapping.projbp).toEqual(['cpu@h0', 'gpu1@h0']);
    click(q('inspector-pes-gpu1@h0')!);
    expect(projectStore.getState().doc.mapping.projbp).toBe('cpu@h0');
    act(() => projectStore.getState().undo());
    act(() => projectStore.getState().undo());
    expect(projectStore.getState().doc.mapping.projbp).toEqual(['gpu0@h0', 'cpu@h0', 'gpu1@h0']);
  });

  it('a kernel without a split has no Tasks field and a single PE picker', () => {
    projectStore.getState().load(mlem());
    projectStore.getState().select({ kind: 'node', id: 'update' });
    act(() => root.render(<Inspector />));
    expect(q('inspector-tasks')).toBeNull();
    expect(q('inspector-pes')).toBeNull();
    const pick = q('inspector-pe') as HTMLSelectElement;
    expect([...pick.options].map((o) => o.value)).toEqual(['', 'cpu@h0', 'gpu0@h0']);
  });

  it('the mapping board shows a list-mapped node in each of its PEs and ticks PEs for nodes with tasks only', () => {
    projectStore.getState().load(mlem());
    act(() => root.render(<MappingPanel />));
    const zone = (pe: string) => [...q(`map-zone-${pe}`)!.querySelectorAll('[data-testid^="map-chip-"]')].map((c) => c.textContent);
    expect(zone('gpu0@h0')).toEqual(['projbp', 'update', 'error']);
    expect(zone('cpu@h0')).toEqual(['phantom', 'projbp']);
    expect(q('map-pes-projbp')).not.toBeNull();
    expect(q('map-pes-update')).toBeNull();
    click(q('map-pes-projbp-cpu@h0')!);
    expect(projectStore.getState().doc.mapping.projbp).toBe('gpu0@h0');
    expect(zone('cpu@h0')).toEqual(['phantom']);
  });
});
