import type { BagNumbers as BagNumbersT } from '../store/run/state.js';

/** A task-bag run's bag: live while it runs, its final counts and each PE's tasks after. */
export function BagNumbers({ bag, perPe }: { bag: BagNumbersT; perPe?: Record<string, number> }) {
  const rows: { id: string; label: string; value: number; text?: string; title: string }[] = [
    {
      id: 'committed',
      label: 'Tasks',
      value: bag.committed,
      text: `${bag.committed} / ${bag.tasks} committed`,
      title: 'Tasks committed (exactly one result each) of all the run has: one per node and iteration',
    },
    { id: 'requeued', label: 'Requeued', value: bag.requeued, title: 'Tasks put back in the bag: their PE left the pool, or they failed and were tried again' },
    { id: 'discarded', label: 'Discarded', value: bag.discarded, title: 'Late results of superseded attempts (or of agents that had left), thrown away' },
    { id: 'recomputed', label: 'Recomputed', value: bag.recomputed, title: 'Committed tasks run again because the agent holding their outputs left' },
    { id: 'depth', label: 'Bag depth', value: bag.depth, title: 'Ready tasks not yet given to a PE (no free capable PE)' },
    { id: 'in-flight', label: 'In flight', value: bag.inFlight, title: 'Tasks given to a PE and not done' },
  ];
  return (
    <>
      <table className="run-numbers" data-testid="run-bag">
        <tbody>
          {rows.map((r) => (
            <tr key={r.id} title={r.title}>
              <td>{r.label}</td>
              <td data-testid={`run-bag-${r.id}`} data-value={r.value}>
                {r.text ?? r.value}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {perPe && Object.keys(perPe).length > 0 && (
        <table className="run-util" data-testid="run-bag-per-pe" title="Tasks each PE committed">
          <tbody>
            {Object.entries(perPe)
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([pe, n]) => (
                <tr key={pe} data-pe={pe} data-value={n}>
                  <td className="mono">{pe}</td>
                  <td>
                    <span className="run-bar">
                      <span style={{ width: `${((n / Math.max(1, bag.committed)) * 100).toFixed(1)}%` }} />
                    </span>
                  </td>
                  <td>{n} tasks</td>
                </tr>
              ))}
          </tbody>
        </table>
      )}
    </>
  );
}
