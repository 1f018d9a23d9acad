import { formatDuration } from '../timeline/viewport.js';
import type { freshness, RunState } from '../store/run/state.js';

type Fresh = ReturnType<typeof freshness>;

/** The bar at the top: what the run came to (pass/fail and the first failing check), whether it is of the document as it is, and how long a run should take. */
export function Outcome({
  st,
  live,
  fresh,
  estimate,
  source,
}: {
  st: RunState;
  live: RunState['live'];
  fresh: Fresh;
  estimate: number | null;
  source: 'hints' | 'calibration';
}) {
  const state =
    st.status === 'calibrating'
      ? 'calibrating'
      : st.status === 'running' || st.status === 'stopping'
        ? 'running'
        : st.status === 'stopped'
          ? 'stopped'
          : st.result
            ? st.result.ok
              ? 'passed'
              : 'failed'
            : st.status === 'failed'
              ? 'failed'
              : st.status === 'checked'
                ? 'checked'
                : 'none';
  return (
    <header className={`run-outcome ${state}${fresh === 'modified' ? ' stale' : ''}`} data-testid="run-outcome" data-state={state}>
      <div className="run-outcome-line">
        {state === 'none' && <span className="muted">No run yet: connect to the agents, then Start.</span>}
        {state === 'checked' && (
          <span className="run-ok">
            {st.mode === 'taskbag'
              ? 'Checked: for every node some PE of the connected agents has its kernel, meets its requires and holds its buffers.'
              : 'Deployed: the agents serve every host and PE of the plan, with room for its buffers.'}
          </span>
        )}
        {state === 'running' &&
          (st.mode === 'taskbag' && st.bag ? (
            <span>
              <b>Running in task-bag mode</b>: {st.bag.committed} / {st.bag.tasks} tasks committed
            </span>
          ) : (
            <span>
              <b>Running</b>: cycle {live.cycle} / {live.cycles || '—'}
            </span>
          ))}
        {state === 'calibrating' && (
          <span>
            <b>Calibrating</b> {st.calibration?.strategy ? `(${st.calibration.strategy})` : ''}: measuring each firing and transfer on the agents…
          </span>
        )}
        {estimate !== null && (
          <span
            className="run-estimate"
            data-testid="run-estimate"
            data-seconds={estimate}
            title={
              source === 'calibration'
                ? "Predicted with the project's calibration (this machine's measured times)"
                : "Predicted from the kernels' cost hints; Calibrate for this machine's times"
            }
          >
            estimated {formatDuration(estimate * 1e6)} for {st.iterations} iterations ({source === 'calibration' ? 'calibrated' : 'cost hints'})
          </span>
        )}
        {fresh !== 'none' && (
          <span
            className={`run-fresh ${fresh}`}
            data-testid="run-freshness"
            data-state={fresh}
            title={fresh === 'modified' ? 'Deploy or Start again to check and run the document as it is' : undefined}
          >
            {fresh === 'modified' ? 'modified since deploy: shown results are of an earlier revision' : 'of the document as it is'}
          </span>
        )}
      </div>
      {st.status === 'stopped' && (
        <div className="run-stopped" data-testid="run-stopped">
          {st.mode === 'taskbag' && st.bag
            ? `Stopped with ${st.bag.committed} of ${st.bag.tasks} tasks committed.`
            : `Stopped at cycle ${live.cycle} of ${live.cycles}.`}{' '}
          The trace so far is kept below and can be exported.
        </div>
      )}
      {st.failure && st.status !== 'stopped' && (
        <div className="run-failure" data-testid="run-failure">
          <b>Run failed on {st.failure.host}</b>
          {st.failure.pe && <> · PE {st.failure.pe}</>}
          {st.failure.node && <> · node {st.failure.node}</>}
          {st.failure.iteration !== undefined && <> · iteration {st.failure.iteration}</>}
          <div>{st.failure.message}</div>
          <div className="muted">The trace so far is kept below and can be exported.</div>
        </div>
      )}
      {st.result && <CheckResult result={st.result} failure={st.failure} status={st.status} />}
    </header>
  );
}

function CheckResult({ result, failure, status }: { result: NonNullable<RunState['result']>; failure?: { node?: string; message: string }; status: string }) {
  // A failure that is not a check (a lost agent, a refused deploy) is shown by the failure box alone.
  if (status === 'stopped' || (!result.ok && !failure?.node)) return null;
  const passed = result.ok;
  return (
    <div className={`run-check ${passed ? 'passed' : 'failed'}`} data-testid="run-check" data-result={passed ? 'passed' : 'failed'}>
      {passed ? (
        <>
          <b>Checks passed</b>: {result.bag ? `${result.bag.committed} tasks, ${result.cycles} iterations in task-bag mode` : `${result.cycles} cycles`} in{' '}
          {result.seconds.toFixed(2)} s{result.dropped > 0 && <>, {result.dropped} trace events dropped by the agents</>}
          {result.reports.map((r) => (
            <div key={`${r.host}/${r.node}`} className="mono">
              {r.node} @ {r.host}, iteration {r.iteration}: {summarise(r.values)}
            </div>
          ))}
        </>
      ) : (
        <>
          <b>Check failed</b>
          {failure?.node ? ` at ${failure.node}` : ''}: {failure?.message ?? 'the run did not finish'}
        </>
      )}
    </div>
  );
}

function summarise(values: Record<string, number | number[] | string>): string {
  return Object.entries(values)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? `[${v.length} values]` : typeof v === 'number' ? +v.toPrecision(6) : v}`)
    .join(', ');
}
