import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { findKernel, listKernels, type KernelSpec } from '@pipeloom/kernels';
import { KERNEL_MIME, SCAN_ITEM, addKernelNode } from './addNode.js';
import { SCAN_DEFAULTS } from '../document/scanNode.js';
import { reportAgentKernels, useAgentKernels } from '../store/agentKernels.js';
import { appRun, useRun } from '../store/run/store.js';
import { kernelDocLines, paramFacts, portLine } from '../lib/kernelDocs.js';

// The kernel registry: the built-ins by category, then each kernel package (loaded here or
// reported by the connected agents) under its own heading, with its docs. Drag a kernel onto
// the canvas, or click it to drop it beside the last node. From the keyboard: Tab reaches the
// items, arrow keys move between them, Enter (or Space) adds one. Hovering shows the docs as a
// tooltip; the help panel under the list opens on the item reached by keyboard or added by a
// click (after the click, never on mousedown: the list shrinking under a pressed button would
// lose the click) and then follows the pointer.
export function Palette() {
  const [filter, setFilter] = useState('');
  const [help, setHelp] = useState<string | null>(null);
  const list = useRef<HTMLDivElement>(null);
  const byHost = useAgentKernels((s) => s.byHost);
  // Agents connected from the Run view report their kernels too.
  const runAgents = useRun(appRun, (s) => s.agents);
  useEffect(() => {
    for (const a of runAgents) reportAgentKernels(a.host, a.kernels);
  }, [runAgents]);

  const groups = useMemo(() => {
    const q = filter.trim().toLowerCase();
    const m = new Map<string, { title: string; pkg?: string; kernels: KernelSpec[] }>();
    for (const k of listKernels()) {
      if (q && !`${k.id} ${k.title} ${k.category} ${k.description} ${k.package ?? ''}`.toLowerCase().includes(q)) continue;
      const pkg = k.package && k.package !== 'builtin' ? k.package : undefined;
      const key = pkg ? `package ${pkg}` : k.category;
      const g = m.get(key) ?? { title: pkg ? `Package ${pkg}` : k.category, pkg, kernels: [] };
      g.kernels.push(k);
      m.set(key, g);
    }
    // Built-in categories first, then packages, each in registry order.
    return [...m.values()].sort((a, b) => Number(Boolean(a.pkg)) - Number(Boolean(b.pkg)));
  }, [filter, byHost]);

  /** Which agents report `id`, with their versions: `h0 1.0.0, h1 1.0.0`. */
  const reportedBy = (id: string) =>
    Object.entries(byHost)
      .flatMap(([host, ks]) => ks.filter((k) => k.id === id).map((k) => `${host} ${k.version}`))
      .join(', ');

  const addBeside = (id: string) => addKernelNode(id);

  const docs = (k: KernelSpec) =>
    [...kernelDocLines(k), reportedBy(k.id) ? `reported by ${reportedBy(k.id)}` : '', 'Drag onto the canvas, or click (Enter) to add.']
      .filter(Boolean)
      .join('\n');

  /** Arrow keys walk the items shown, in order; Home and End jump to the ends. */
  const move = (e: KeyboardEvent<HTMLElement>, from: HTMLElement | null) => {
    const items = [...(list.current?.querySelectorAll<HTMLElement>('.palette-item') ?? [])];
    if (!items.length) return;
    const i = from ? items.indexOf(from) : -1;
    const to =
      e.key === 'ArrowDown'
        ? Math.min(items.length - 1, i + 1)
        : e.key === 'ArrowUp'
          ? Math.max(0, i - 1)
          : e.key === 'Home'
            ? 0
            : e.key === 'End'
              ? items.length - 1
              : -1;
    if (to < 0) return;
    e.preventDefault();
    items[to].focus();
  };

  const onItemKey = (e: KeyboardEvent<HTMLDivElement>, id: string) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      addBeside(id);
    } else if (e.key === 'ArrowUp' && e.currentTarget === list.current?.querySelector('.palette-item')) {
      e.preventDefault();
      list.current?.parentElement?.querySelector<HTMLInputElement>('.search')?.focus();
    } else move(e, e.currentTarget);
  };

  const shown = help ? findKernel(help) : undefined;
  const scanShown = !filter.trim() || SCAN_WORDS.includes(filter.trim().toLowerCase());

  const group = (g: (typeof groups)[number]) => (
    <div key={g.title} className="palette-group" data-testid={g.pkg ? `palette-package-${g.pkg}` : undefined}>
      <div className="palette-cat">{g.title}</div>
      {g.kernels.map((k) => (
        <div
          key={k.id}
          className="palette-item"
          draggable
          tabIndex={0}
          role="listitem"
          aria-label={`${k.title}: ${k.description}`}
          title={docs(k)}
          data-testid={`palette-${k.id}`}
          onMouseEnter={() => help !== null && setHelp(k.id)}
          onFocus={(e) => e.currentTarget.matches(':focus-visible') && setHelp(k.id)}
          onKeyDown={(e) => onItemKey(e, k.id)}
          onDragStart={(e) => {
            e.dataTransfer.setData(KERNEL_MIME, k.id);
            e.dataTransfer.effectAllowed = 'copy';
          }}
          onClick={() => {
            addBeside(k.id);
            setHelp(k.id);
          }}
        >
          <div className="pi-title">{k.title}</div>
          <div className="pi-ports">
            {k.inputs.length ? k.inputs.map((p) => (p.repeat ? `${p.name}…` : p.name)).join(', ') : '—'} →{' '}
            {k.outputs.length ? k.outputs.map((p) => (p.repeat ? `${p.name}…` : p.name)).join(', ') : '—'}
          </div>
          {g.pkg && (
            <div className="pi-doc" data-testid={`palette-doc-${k.id}`} title={k.description}>
              {k.version}
              {reportedBy(k.id) ? ` · on ${reportedBy(k.id)}` : ''} · {k.description}
            </div>
          )}
        </div>
      ))}
    </div>
  );

  return (
    <div className="panel palette" data-testid="palette">
      <div className="panel-title">Kernels</div>
      <input
        className="search"
        placeholder="Filter kernels (↓ to the list)"
        value={filter}
        onChange={(e) => setFilter(e.target.value)}
        onKeyDown={(e) => e.key === 'ArrowDown' && move(e, null)}
        data-testid="palette-filter"
      />
      <div ref={list} className="palette-list" role="list" aria-label="Kernels">
        {groups.filter((g) => !g.pkg).map(group)}
        {/* The scan macro-node after the built-in kernels, before the packages. */}
        {scanShown && (
          <div className="palette-group">
            <div className="palette-cat">Macro nodes</div>
            <div
              className="palette-item"
              draggable
              tabIndex={0}
              role="listitem"
              aria-label={`Scan: ${SCAN_DOC}`}
              title={`${SCAN_DOC}\nDrag onto the canvas, or click (Enter) to add.`}
              data-testid="palette-scan"
              onKeyDown={(e) => onItemKey(e, SCAN_ITEM)}
              onDragStart={(e) => {
                e.dataTransfer.setData(KERNEL_MIME, SCAN_ITEM);
                e.dataTransfer.effectAllowed = 'copy';
              }}
              onClick={() => addBeside(SCAN_ITEM)}
            >
              <div className="pi-title">Scan</div>
              <div className="pi-ports">in → out, total</div>
            </div>
          </div>
        )}
        {groups.filter((g) => g.pkg).map(group)}
        {!groups.length && !scanShown && <div className="empty">No kernel matches “{filter}”.</div>}
      </div>
      {shown && <KernelHelp kernel={shown} reportedBy={reportedBy(shown.id)} onClose={() => setHelp(null)} />}
    </div>
  );
}

/** The Scan entry's docs, and the words its filter matches. */
const SCAN_DOC = `A prefix scan of N elements over a binary operator (default ${SCAN_DEFAULTS.operator}) on an ordered list of PEs, its workers: each scans its block, a prefix network (${SCAN_DEFAULTS.network}, serial, sklansky, brent-kung, blelloch) combines the block totals, each adds its prefix. The inspector shows its model and draws its DAG (Expand).`;
const SCAN_WORDS = `scan prefix macro network operator ${SCAN_DOC}`.toLowerCase();

/** The help panel: a kernel's description, ports and params (description, unit, range, default), as GNU Radio Companion shows block docs. */
function KernelHelp({ kernel: k, reportedBy, onClose }: { kernel: KernelSpec; reportedBy: string; onClose: () => void }) {
  return (
    <div className="palette-help" data-testid="palette-help" aria-live="polite">
      <div className="palette-help-head">
        <b>{k.title}</b> <code>{k.id}</code> <span className="muted">{k.version}</span>
        <span className="spacer" />
        <button className="icon" onClick={onClose} title="Close the help" data-testid="palette-help-close">
          ×
        </button>
      </div>
      <p className="help">{k.description}</p>
      {reportedBy && <p className="help">On {reportedBy}</p>}
      <div className="palette-help-ports mono">
        {[...k.inputs.map((p) => portLine('in', p)), ...k.outputs.map((p) => portLine('out', p))].map((l) => (
          <div key={l}>{l}</div>
        ))}
      </div>
      {Object.keys(k.params).length > 0 && (
        <dl className="palette-help-params">
          {Object.entries(k.params).map(([n, p]) => (
            <div key={n} data-testid={`palette-help-param-${n}`}>
              <dt>
                <code>{n}</code> {p.description}
              </dt>
              <dd>{paramFacts(p)}</dd>
            </div>
          ))}
        </dl>
      )}
    </div>
  );
}
