import { stepsText, TRACE_FILE_LIMITS, type DeployProgress, type TraceColumns } from '@pipeloom/core';
import { formatDuration } from '../timeline/viewport.js';
import type { RunStore } from '../store/run/store.js';
import type { RunState } from '../store/run/state.js';
import { BagNumbers } from './BagNumbers.js';
import { Compare } from './Compare.js';

export interface LivePanelProps {
  run: RunStore;
  st: RunState;
  running: boolean;
  /** The measured trace. */
  measured: TraceColumns;
  /** The plan drawn under the lanes, for the comparison after a static run. */
  predicted?: TraceColumns;
  /** Iterations and cycle time of the plan. */
  planIterations: number;
  plannedCycle: number;
  /** Something to export: a measured trace, or the predicted one. */
  canExport: boolean;
  exportTrace: () => void;
}

/** The Run view's live numbers, the deploy's progress, a task-bag run's bag, the comparison with the plan, and the trace's Export / Open. */
export function LivePanel({ run, st, running, measured, predicted, planIterations, plannedCycle, canExport, exportTrace }: LivePanelProps) {
  const shownBag = st.mode === 'taskbag';
  const live = st.live;
  return (
    <>
      <h3>Live</h3>
      <table className="run-numbers">
        <tbody>
          <tr>
            <td>Status</td>
            <td data-testid="run-status" data-status={st.status}>
              {st.status === 'running' && deploying(st.deploy) ? 'running: deploying…' : st.status}
            </td>
          </tr>
          {running && st.deploy && deploying(st.deploy) && <DeployRows deploy={st.deploy} />}
          <tr>
            <td title={shownBag ? 'Iterations whose tasks are all committed (about: committed tasks over tasks per iteration)' : undefined}>
              {shownBag ? 'Iteration' : 'Cycle'}
            </td>
            <td data-testid="run-cycle">
              {live.cycle} / {live.cycles || '—'}
            </td>
          </tr>
          <tr>
            <td>Throughput</td>
            <td data-testid="run-throughput" data-value={live.iterationsPerSecond}>
              {live.iterationsPerSecond.toFixed(1)} iterations/s
            </td>
          </tr>
          <tr>
            <td title={shownBag ? 'Elapsed time over the iterations complete (iterations overlap as the window allows)' : undefined}>
              {shownBag ? 'Per iteration' : 'Cycle time'}
            </td>
            <td data-testid="run-cycle-time">{live.cycleTime ? formatDuration(live.cycleTime * 1e6) : '—'}</td>
          </tr>
          <tr>
            <td>Events</td>
            <td data-testid="run-events">{live.events.toLocaleString()}</td>
          </tr>
        </tbody>
      </table>
      {shownBag && st.bag && <BagNumbers bag={st.bag} perPe={st.result?.bag?.perPe} />}
      {live.utilisation.length > 0 && (
        <table className="run-util" data-testid="run-utilisation">
          <tbody>
            {live.utilisation.map((u) => (
              <tr key={u.key}>
                <td className="mono">{u.key}</td>
                <td>
                  <span className="run-bar">
                    <span style={{ width: `${(u.value * 100).toFixed(1)}%` }} />
                  </span>
                </td>
                <td>{(u.value * 100).toFixed(0)}%</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {!running && !shownBag && live.events > 0 && predicted && (
        <Compare
          measured={measured}
          predicted={predicted}
          st={st}
          fill={run.runGraph()?.fillCycles ?? 0}
          planIterations={planIterations}
          plannedCycle={plannedCycle}
        />
      )}
      <div className="run-buttons">
        <button data-testid="run-export" onClick={exportTrace} disabled={!canExport} title="Chrome trace JSON (open in Perfetto or chrome://tracing)">
          Export {measured.length ? 'trace' : 'predicted trace'}
        </button>
        <label className="button" title="Show a trace exported here or written by pipeloom run --trace (Chrome trace JSON) in place of the last run's">
          Open trace…
          <input
            data-testid="run-open-trace"
            type="file"
            accept=".json,application/json"
            hidden
            disabled={running}
            onChange={(e) => {
              const f = e.target.files?.[0];
              // Too large a file is refused before it is read.
              if (f) void (f.size > TRACE_FILE_LIMITS.maxChars ? Promise.resolve(null) : f.text()).then((text) => run.openTrace(text, f.name, f.size));
              e.target.value = '';
            }}
          />
        </label>
      </div>
      {st.opened && (
        <div className="muted" data-testid="run-opened-trace">
          Showing {st.opened.file}: {st.opened.events.toLocaleString('en')} events
          {st.opened.metadata && (
            <>
              {' '}
              ({st.opened.metadata.source} {st.opened.metadata.document.name}, {st.opened.metadata.strategy}, {st.opened.metadata.sync})
            </>
          )}
        </div>
      )}
      {st.traceProblems.length > 0 && (
        <ul className="run-problems" data-testid="run-trace-problems">
          {st.traceProblems.map((p, i) => (
            <li key={i} className={p.severity}>
              {p.path}: {p.message}
              {p.hint && <span className="muted"> ({p.hint})</span>}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** Whether a run's deploy is still under way (before the first report, or some host has not deployed). */
const deploying = (d: DeployProgress | undefined) => !d || d.hosts.some((h) => !h.deployed);

/** Each host's deploy step while a run deploys. */
function DeployRows({ deploy }: { deploy: DeployProgress }) {
  return (
    <>
      {deploy.hosts.map((h) => {
        const step = h.deployed ? 'ready' : h.steps.length ? stepsText(h.steps) : 'waiting for its first report';
        return (
          <tr key={h.host} data-testid="run-deploy-progress" data-host={h.host} data-step={step}>
            <td>Deploy {h.host}</td>
            <td>{step}</td>
          </tr>
        );
      })}
    </>
  );
}
