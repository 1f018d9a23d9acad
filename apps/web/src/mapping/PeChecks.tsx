import type { MappingTarget, WrittenDocument } from '@pipeloom/core';
import { projectStore } from '../store/project.js';
import { flatNode } from '../document/graphs.js';
import { pesOf, targetOf } from '../document/targets.js';
import { peColor } from '../lib/color.js';
import { isScan } from '../document/scanNode.js';

// The PEs of a node with tasks, or of a scan node, ticked. A node with tasks: its shares take the
// ticked PEs in turn (share j on the list's PE j mod P), the sum on the first. A scan: the list is
// its workers in order (worker i on the list's PE i), so its order matters and ↑ moves a PE one
// place earlier. Ticking appends a PE to the list, unticking drops it; one PE left is written as
// a plain id, none removes the entry. One undo step per tick or move.

export function PeChecks({ doc, node, testid }: { doc: WrittenDocument; node: string; testid: string }) {
  const target: MappingTarget | undefined = Object.hasOwn(doc.mapping, node) ? doc.mapping[node] : undefined;
  const on = pesOf(target);
  const scan = isScan(flatNode(doc, node));
  const set = (pes: string[]) => projectStore.getState().dispatch({ type: 'mapping/set', node, pe: targetOf(pes) }, { label: `map ${node}` });
  const earlier = (k: number) => set([...on.slice(0, k - 1), on[k], on[k - 1], ...on.slice(k + 1)]);
  // A scan's workers in list order first (the order is what it runs), then the PEs not ticked.
  const pes = scan ? [...on.flatMap((id) => doc.arch.pes.filter((p) => p.id === id)), ...doc.arch.pes.filter((p) => !on.includes(p.id))] : doc.arch.pes;
  return (
    <div className="pe-checks" data-testid={testid}>
      {pes.map((p) => {
        const k = on.indexOf(p.id);
        return (
          <label
            key={p.id}
            className="pe-check"
            title={scan ? (k >= 0 ? `worker ${k}` : undefined) : k === 0 && on.length > 1 ? 'first in the list: also runs the sum of the shares' : undefined}
          >
            <input
              type="checkbox"
              checked={k >= 0}
              data-testid={`${testid}-${p.id}`}
              onChange={(e) => set(e.target.checked ? [...on, p.id] : on.filter((x) => x !== p.id))}
            />
            <span className="swatch" style={{ background: peColor(doc, p.id) }} /> {p.id}
            {scan && k >= 0 && <span className="muted"> w{k}</span>}
            {!scan && k >= 0 && on.length > 1 && <span className="muted"> #{k + 1}</span>}
            {scan && k > 0 && (
              <button
                className="icon small"
                title={`Make ${p.id} worker ${k - 1}`}
                data-testid={`${testid}-${p.id}-up`}
                onClick={(e) => (e.preventDefault(), earlier(k))}
              >
                ↑
              </button>
            )}
          </label>
        );
      })}
      <div className="help">
        {scan
          ? on.length
            ? `${on.length} worker${on.length > 1 ? 's' : ''} in this order: worker i scans block i of the input on the list's PE i.`
            : 'Tick the PEs of its workers, in order: worker i scans block i of the input.'
          : on.length > 1
            ? `Shares take ${on.join(', ')} in turn (share j on the PE j mod ${on.length} of this list); the sum runs on ${on[0]}.`
            : on.length === 1
              ? `All shares on ${on[0]}; tick more PEs to spread them.`
              : 'Tick the PEs its shares take in turn.'}
      </div>
    </div>
  );
}
