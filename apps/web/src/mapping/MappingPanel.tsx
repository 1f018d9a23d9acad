import { useMemo, useState } from 'react';
import { projectStore, useProject } from '../store/project.js';
import { peColor } from '../lib/color.js';
import { flatNodes } from '../store/resolve.js';
import { effectivePe, flatNode } from '../document/graphs.js';
import { mapsTo, pesOf, takesList, targetTitle } from '../document/targets.js';
import { PeChecks } from './PeChecks.js';
import { isScan } from '../document/scanNode.js';

const NODE_MIME = 'application/pipeloom-node';

// PEs grouped by host as drop targets; DFG nodes as chips, by flattened id: a composite (`s1`,
// mapping every inner node not mapped itself) and each node inside it (`s1/inc`). A node
// mapped through its composite sits in that PE's zone, its chip faded. Drag a chip onto a PE
// to map it, onto "unmapped" to clear its own entry. A node with tasks may be mapped onto
// several PEs (ticked under "Nodes with tasks"), a scan node onto its workers in order (under
// "Scan workers"): its chip is in each of their zones.
export function MappingPanel() {
  const doc = useProject((s) => s.doc);
  const all = useMemo(() => flatNodes(doc), [doc]);
  const listed = useMemo(() => all.filter((n) => takesList(flatNode(doc, n.id))), [all, doc]);
  const scans = useMemo(() => listed.filter((n) => isScan(flatNode(doc, n.id))), [listed, doc]);
  const split = useMemo(() => listed.filter((n) => !isScan(flatNode(doc, n.id))), [listed, doc]);
  const selection = useProject((s) => s.selection);
  const [over, setOver] = useState<string | null>(null);
  const set = (node: string, pe: string | null) => projectStore.getState().dispatch({ type: 'mapping/set', node, pe }, { label: `map ${node}` });

  const zone = (key: string, pe: string | null, title: React.ReactNode, color?: string) => {
    const on = (id: string) => effectivePe(doc.mapping, id).pe;
    const known = (id: string) => pesOf(on(id)).some((x) => doc.arch.pes.some((p) => p.id === x));
    const nodes = all.filter((n) => (pe ? mapsTo(on(n.id), pe) : !known(n.id)));
    return (
      <div
        key={key}
        className={`map-zone${over === key ? ' over' : ''}`}
        style={color ? ({ '--pe': color } as React.CSSProperties) : undefined}
        data-testid={pe ? `map-zone-${pe}` : 'map-zone-unmapped'}
        onDragOver={(e) => {
          if (!e.dataTransfer.types.includes(NODE_MIME)) return;
          e.preventDefault();
          setOver(key);
        }}
        onDragLeave={() => setOver((o) => (o === key ? null : o))}
        onDrop={(e) => {
          const node = e.dataTransfer.getData(NODE_MIME);
          setOver(null);
          if (node) set(node, pe);
        }}
      >
        <div className="map-zone-title">{title}</div>
        <div className="chips">
          {nodes.map((n) => (
            <span
              key={n.id}
              className={`chip${n.composite ? ' composite' : ''}${!Object.hasOwn(doc.mapping, n.id) && on(n.id) ? ' inherited' : ''}${(selection?.kind === 'mapping' && selection.node === n.id) || (selection?.kind === 'node' && !selection.at && selection.id === n.id) ? ' selected' : ''}`}
              title={
                n.composite
                  ? `${n.id}: every node inside not mapped itself`
                  : Object.hasOwn(doc.mapping, n.id)
                    ? pesOf(on(n.id)).length > 1
                      ? `${n.id}: ${targetTitle(on(n.id), isScan(flatNode(doc, n.id)))}`
                      : undefined
                    : effectivePe(doc.mapping, n.id).from
                      ? `through ${effectivePe(doc.mapping, n.id).from}`
                      : undefined
              }
              draggable
              data-testid={`map-chip-${n.id}`}
              onDragStart={(e) => e.dataTransfer.setData(NODE_MIME, n.id)}
              onClick={() => projectStore.getState().select({ kind: 'mapping', node: n.id })}
            >
              {n.id}
            </span>
          ))}
          {!nodes.length && <span className="chip-empty">drop nodes here</span>}
        </div>
      </div>
    );
  };

  return (
    <div className="panel" data-testid="mapping-panel">
      <div className="panel-title">Mapping</div>
      {doc.options.mode === 'taskbag' && (
        // Shown, not hidden: the document keeps the mapping for a static run.
        <p className="map-unused" role="note" data-testid="mapping-unused">
          Not used in task-bag mode: tasks go to capable PEs at run time. The mapping is kept for static runs (Execution mode in the project's run options).
        </p>
      )}
      {zone('unmapped', null, 'Unmapped')}
      {doc.arch.hosts.map((h) => (
        <div key={h.id} className="map-host">
          <div className="map-host-title">{h.id}</div>
          {doc.arch.pes
            .filter((p) => p.host === h.id)
            .map((p) =>
              zone(
                p.id,
                p.id,
                <>
                  <span className="swatch" style={{ background: peColor(doc, p.id) }} /> {p.id} <span className="muted">{p.kind}</span>
                </>,
                peColor(doc, p.id),
              ),
            )}
        </div>
      ))}
      {split.length > 0 && (
        <div className="map-split" data-testid="map-split">
          <div className="map-host-title" title="A node with tasks runs each firing as shares, which may spread over several PEs">
            Nodes with tasks
          </div>
          {split.map((n) => (
            <div key={n.id} className="map-split-node">
              <b>{n.id}</b>
              <PeChecks doc={doc} node={n.id} testid={`map-pes-${n.id}`} />
            </div>
          ))}
        </div>
      )}
      {scans.length > 0 && (
        <div className="map-split" data-testid="map-scans">
          <div className="map-host-title" title="A scan node runs on an ordered list of PEs: worker i scans block i of its input">
            Scan workers
          </div>
          {scans.map((n) => (
            <div key={n.id} className="map-split-node">
              <b>{n.id}</b>
              <PeChecks doc={doc} node={n.id} testid={`map-pes-${n.id}`} />
            </div>
          ))}
        </div>
      )}
      <p className="help">
        Drag a node onto a PE (all of it: a node with tasks too), or pick its PE on the node or in the inspector; tick several PEs for a node with tasks, or a
        scan's workers in order.
      </p>
    </div>
  );
}
