import { useCallback, useRef, useState } from 'react';
import type { NodeChange } from '@xyflow/react';

// React Flow measures nodes and reports sizes as changes; the document does not store them,
// so each canvas keeps the measurements beside it and hands them back on every render.
export function useMeasured() {
  const sizes = useRef(new Map<string, { width: number; height: number }>());
  const [tick, setTick] = useState(0);
  const take = useCallback((changes: NodeChange[]) => {
    let changed = false;
    for (const c of changes) {
      if (c.type === 'dimensions' && c.dimensions) {
        sizes.current.set(c.id, c.dimensions);
        changed = true;
      }
    }
    if (changed) setTick((t) => t + 1);
  }, []);
  return { sizes: sizes.current, tick, take };
}

let dragSerial = 0;
/** A fresh coalescing key for one drag gesture. */
export const nextDragKey = (what: string) => `${what}:drag:${++dragSerial}`;

/** The id of the element React Flow just selected, if any. */
export function pickedId(changes: readonly { type: string }[]): string | undefined {
  for (const c of changes) if (c.type === 'select' && (c as { selected?: boolean }).selected) return (c as unknown as { id: string }).id;
  return undefined;
}

/** Ids React Flow asks to remove (Delete key). */
export function removedIds(changes: readonly { type: string }[]): string[] {
  return changes.filter((c) => c.type === 'remove').map((c) => (c as unknown as { id: string }).id);
}
