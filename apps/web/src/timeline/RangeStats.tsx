import { useMemo } from 'react';
import type { TraceColumns } from '@pipeloom/core';
import { rangeStats } from './stats.js';
import { formatDuration, formatTime } from './viewport.js';

/** Statistics of the selected time range: its span, events, cycles and each lane's busy share. */
export function RangeStatsPanel({
  measured,
  range,
  version,
  onClose,
}: {
  measured: TraceColumns;
  range: { t0: number; t1: number };
  version: number;
  onClose: () => void;
}) {
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const s = useMemo(() => rangeStats(measured, range.t0, range.t1), [measured, range, version]);
  const lanes = s.lanes.filter((l) => l.events > 0);
  return (
    <div className="timeline-range" data-testid="timeline-range" data-events={s.events} data-cycles={s.cycles}>
      <div className="timeline-range-head">
        <b>
          {formatTime(range.t0, range.t1 - range.t0)} – {formatTime(range.t1, range.t1 - range.t0)}
        </b>
        <span data-testid="timeline-range-span">{formatDuration(range.t1 - range.t0)}</span>
        <span data-testid="timeline-range-events">{s.events.toLocaleString()} events</span>
        <span data-testid="timeline-range-cycle" title="Mean time between the ends of consecutive cycles that end in the range">
          {s.cycles} cycles ending{s.meanCycle !== null ? `, mean cycle ${formatDuration(s.meanCycle)}` : ''}
        </span>
        <span className="spacer" />
        <button data-testid="timeline-range-clear" onClick={onClose} title="Clear the selection (Esc)">
          ×
        </button>
      </div>
      {lanes.length > 0 ? (
        <table>
          <tbody>
            {lanes.map((l) => (
              <tr key={l.key} data-testid="timeline-range-lane" data-lane={l.key} data-share={l.share}>
                <td className="mono">{l.key}</td>
                <td>
                  <span className="run-bar">
                    <span style={{ width: `${(l.share * 100).toFixed(1)}%` }} />
                  </span>
                </td>
                <td>{(l.share * 100).toFixed(0)}% busy</td>
                <td>{l.events.toLocaleString()} events</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <div className="muted">No measured events in this range.</div>
      )}
    </div>
  );
}
