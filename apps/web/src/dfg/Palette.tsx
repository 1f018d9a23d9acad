import { useMemo, useState } from 'react';
import { listKernels, type KernelSpec } from '@pipeloom/kernels';
import { KERNEL_MIME, addKernelNode } from './DfgEditor.js';
import { projectStore } from '../store/project.js';

// The kernel registry grouped by category. Drag a kernel onto the canvas, or click it to
// drop it beside the last node.
export function Palette() {
  const [filter, setFilter] = useState('');
  const groups = useMemo(() => {
    const q = filter.trim().toLowerCase();
    const m = new Map<string, KernelSpec[]>();
    for (const k of listKernels()) {
      if (q && !`${k.id} ${k.title} ${k.category} ${k.description}`.toLowerCase().includes(q)) continue;
      const list = m.get(k.category) ?? [];
      list.push(k);
      m.set(k.category, list);
    }
    return [...m];
  }, [filter]);

  const addBeside = (id: string) => {
    const nodes = projectStore.getState().doc.app.nodes;
    const last = nodes.at(-1)?.position;
    addKernelNode(id, last ? { x: last.x + 300, y: last.y } : { x: 40, y: 80 });
  };

  return (
    <div className="panel palette" data-testid="palette">
      <div className="panel-title">Kernels</div>
      <input className="search" placeholder="Filter kernels" value={filter} onChange={(e) => setFilter(e.target.value)} data-testid="palette-filter" />
      {groups.map(([cat, ks]) => (
        <div key={cat} className="palette-group">
          <div className="palette-cat">{cat}</div>
          {ks.map((k) => (
            <div
              key={k.id}
              className="palette-item"
              draggable
              title={`${k.description}\nDrag onto the canvas, or click to add.`}
              data-testid={`palette-${k.id}`}
              onDragStart={(e) => {
                e.dataTransfer.setData(KERNEL_MIME, k.id);
                e.dataTransfer.effectAllowed = 'copy';
              }}
              onClick={() => addBeside(k.id)}
            >
              <div className="pi-title">{k.title}</div>
              <div className="pi-ports">
                {k.inputs.length ? k.inputs.map((p) => p.name).join(', ') : '—'} → {k.outputs.length ? k.outputs.map((p) => p.name).join(', ') : '—'}
              </div>
            </div>
          ))}
        </div>
      ))}
      {!groups.length && <div className="empty">No kernel matches “{filter}”.</div>}
    </div>
  );
}
