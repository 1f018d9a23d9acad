import type { MappingTarget } from '@pipeloom/core';
import { pesOf, targetLabel, targetTitle } from '../document/targets.js';

/** The picker's value while the node is mapped onto a list: shown, not offered (lists are ticked in the inspector or the mapping board). */
const LIST = '\u0000list';

/**
 * The PE picker on a DFG node (mapping from the canvas): one for kernel, composite and group
 * nodes. It sets one PE; a node with tasks mapped onto several shows its list, and picking a PE
 * here maps all its shares onto that one.
 */
export function PePick({
  flowId,
  pe,
  pes,
  onPick,
}: {
  flowId: string;
  pe?: MappingTarget | null;
  pes?: readonly string[];
  onPick?: (pe: string | null) => void;
}) {
  if (!pes || !onPick) return null;
  const list = pesOf(pe ?? undefined).length > 1;
  return (
    <select
      className="kn-pick nodrag"
      value={list ? LIST : typeof pe === 'string' ? pe : (pe?.[0] ?? '')}
      title={list ? targetTitle(pe ?? undefined) : undefined}
      data-testid={`map-pick-${flowId}`}
      onChange={(e) => onPick(e.target.value || null)}
    >
      <option value="">unmapped</option>
      {list && (
        <option value={LIST} disabled>
          {targetLabel(pe ?? undefined)}
        </option>
      )}
      {pes.map((p) => (
        <option key={p} value={p}>
          {p}
        </option>
      ))}
    </select>
  );
}

/** A node's PE badge: `gpu0@h0`, or `gpu0@h0 +1` with the whole list in its title. */
export function PeBadge({ flowId, pe, what = 'Processing element', scan = false }: { flowId: string; pe?: MappingTarget; what?: string; scan?: boolean }) {
  if (!pesOf(pe).length) return null;
  return (
    <span className="kn-pe" title={`${what}: ${targetTitle(pe, scan)}`} data-testid={`pe-badge-${flowId}`}>
      {targetLabel(pe)}
    </span>
  );
}
