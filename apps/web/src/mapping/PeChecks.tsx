import type { MappingTarget, WrittenDocument } from '@pipeloom/core';
import { projectStore } from '../store/project.js';
import { pesOf, targetOf } from '../store/targets.js';
import { peColor } from '../lib/colors.js';

// The PEs of a node with tasks, ticked: its shares take the ticked PEs in turn (share j on the
// list's PE j mod P), the sum on the first. Ticking appends a PE to the list, unticking drops
// it; one PE left is written as a plain id, none removes the entry. One undo step per tick.

export function PeChecks({ doc, node, testid }: { doc: WrittenDocument; node: string; testid: string }) {
  const target: MappingTarget | undefined = Object.hasOwn(doc.mapping, node) ? doc.mapping[node] : undefined;
  const on = pesOf(target);
  const set = (pes: string[]) => projectStore.getState().dispatch({ type: 'mapping/set', node, pe: targetOf(pes) }, { label: `map ${node}` });
  return (
    <div className="pe-checks" data-testid={testid}>
      {doc.arch.pes.map((p) => {
        const k = on.indexOf(p.id);
        return (
          <label key={p.id} className="pe-check" title={k === 0 && on.length > 1 ? 'first in the list: also runs the sum of the shares' : undefined}>
            <input type="checkbox" checked={k >= 0} data-testid={`${testid}-${p.id}`} onChange={(e) => set(e.target.checked ? [...on, p.id] : on.filter((x) => x !== p.id))} />
            <span className="swatch" style={{ background: peColor(doc, p.id) }} /> {p.id}
            {k >= 0 && on.length > 1 && <span className="muted"> #{k + 1}</span>}
          </label>
        );
      })}
      <div className="help">
        {on.length > 1
          ? `Shares take ${on.join(', ')} in turn (share j on the PE j mod ${on.length} of this list); the sum runs on ${on[0]}.`
          : on.length === 1
            ? `All shares on ${on[0]}; tick more PEs to spread them.`
            : 'Tick the PEs its shares take in turn.'}
      </div>
    </div>
  );
}
