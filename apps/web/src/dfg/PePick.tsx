/** The PE picker on a DFG node (mapping from the canvas): one for kernel, composite and group nodes. */
export function PePick({ flowId, pe, pes, onPick }: { flowId: string; pe?: string | null; pes?: readonly string[]; onPick?: (pe: string | null) => void }) {
  if (!pes || !onPick) return null;
  return (
    <select className="kn-pick nodrag" value={pe ?? ''} data-testid={`map-pick-${flowId}`} onChange={(e) => onPick(e.target.value || null)}>
      <option value="">unmapped</option>
      {pes.map((p) => (
        <option key={p} value={p}>
          {p}
        </option>
      ))}
    </select>
  );
}
