import { useEffect, useMemo, useState } from 'react';
import { listKernels, type KernelSpec } from '@pipeloom/kernels';
import { KERNEL_MIME, addKernelNode } from './DfgEditor.js';
import { reportAgentKernels, useAgentKernels } from '../store/agentKernels.js';
import { appRun, useRun } from '../run/store.js';

// The kernel registry: the built-ins by category, then each kernel package (loaded here or
// reported by the connected agents) under its own heading, with its docs. Drag a kernel onto
// the canvas, or click it to drop it beside the last node.
export function Palette() {
  const [filter, setFilter] = useState('');
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
    [
      `${k.id} ${k.version}${k.package && k.package !== 'builtin' ? ` (package ${k.package})` : ''}`,
      k.description,
      ...k.inputs.map((p) => `in ${p.name}${p.repeat ? ` (x ${p.repeat})` : ''}${p.description ? `: ${p.description}` : ''}`),
      ...k.outputs.map((p) => `out ${p.name}${p.repeat ? ` (x ${p.repeat})` : ''}${p.description ? `: ${p.description}` : ''}`),
      ...Object.entries(k.params).map(([n, p]) => `${n}: ${p.description}${p.unit ? ` (${p.unit})` : ''}`),
      reportedBy(k.id) ? `reported by ${reportedBy(k.id)}` : '',
      'Drag onto the canvas, or click to add.',
    ]
      .filter(Boolean)
      .join('\n');

  return (
    <div className="panel palette" data-testid="palette">
      <div className="panel-title">Kernels</div>
      <input className="search" placeholder="Filter kernels" value={filter} onChange={(e) => setFilter(e.target.value)} data-testid="palette-filter" />
      {groups.map((g) => (
        <div key={g.title} className="palette-group" data-testid={g.pkg ? `palette-package-${g.pkg}` : undefined}>
          <div className="palette-cat">{g.title}</div>
          {g.kernels.map((k) => (
            <div
              key={k.id}
              className="palette-item"
              draggable
              title={docs(k)}
              data-testid={`palette-${k.id}`}
              onDragStart={(e) => {
                e.dataTransfer.setData(KERNEL_MIME, k.id);
                e.dataTransfer.effectAllowed = 'copy';
              }}
              onClick={() => addBeside(k.id)}
            >
              <div className="pi-title">{k.title}</div>
              <div className="pi-ports">
                {k.inputs.length ? k.inputs.map((p) => (p.repeat ? `${p.name}…` : p.name)).join(', ') : '—'} → {k.outputs.length ? k.outputs.map((p) => (p.repeat ? `${p.name}…` : p.name)).join(', ') : '—'}
              </div>
              {g.pkg && (
                <div className="pi-doc" data-testid={`palette-doc-${k.id}`}>
                  {k.version}
                  {reportedBy(k.id) ? ` · on ${reportedBy(k.id)}` : ''} · {k.description}
                </div>
              )}
            </div>
          ))}
        </div>
      ))}
      {!groups.length && <div className="empty">No kernel matches “{filter}”.</div>}
    </div>
  );
}
