import { useMemo } from 'react';
import type { TraceColumns } from '@pipeloom/core';
import { formatDuration } from '../timeline/viewport.js';
import { busyPerCycle, steadyCycles } from '../timeline/stats.js';
import type { RunState } from '../store/run/state.js';

/** Measured against predicted, per cycle and per lane (busy time per steady cycle): where the run departs from its plan. */
export function Compare({
  measured,
  predicted,
  st,
  fill,
  planIterations,
  plannedCycle,
}: {
  measured: TraceColumns;
  predicted: TraceColumns;
  st: RunState;
  fill: number;
  planIterations: number;
  plannedCycle: number;
}) {
  const rows = useMemo(() => {
    const m = steadyCycles(measured, fill, st.iterations);
    const p = steadyCycles(predicted, fill, planIterations);
    const mb = busyPerCycle(measured, m.from, m.to);
    const pb = busyPerCycle(predicted, p.from, p.to);
    return [...new Set([...mb.keys(), ...pb.keys()])].sort().map((key) => ({ key, measured: mb.get(key), predicted: pb.get(key) }));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [measured, predicted, fill, planIterations, st.iterations, st.traceVersion]);
  const ratio = (a?: number, b?: number) => (a !== undefined && b ? `${(a / b).toFixed(2)}×` : '—');
  const us = (v?: number) => (v === undefined ? '—' : formatDuration(v));
  const cycle = st.live.cycleTime;
  return (
    <table className="run-numbers run-compare" data-testid="run-compare">
      <tbody>
        <tr>
          <td>per cycle</td>
          <td>measured</td>
          <td>predicted</td>
          <td>m/p</td>
        </tr>
        <tr data-testid="run-compare-cycle" data-ratio={plannedCycle ? cycle / plannedCycle : undefined}>
          <td>cycle</td>
          <td>{us(cycle * 1e6)}</td>
          <td>{us(plannedCycle * 1e6)}</td>
          <td>{ratio(cycle, plannedCycle)}</td>
        </tr>
        {rows.map((r) => (
          <tr
            key={r.key}
            data-testid="run-compare-lane"
            data-lane={r.key}
            data-ratio={r.measured !== undefined && r.predicted ? r.measured / r.predicted : undefined}
            title="Busy time (firings and transfers) per steady cycle"
          >
            <td className="mono">{r.key}</td>
            <td>{us(r.measured)}</td>
            <td>{us(r.predicted)}</td>
            <td>{ratio(r.measured, r.predicted)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
