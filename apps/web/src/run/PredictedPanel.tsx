import type { ImplementationGraph, Prediction, ProjectDocument, TraceColumns, WrittenDocument } from '@pipeloom/core';
import { formatDuration } from '../timeline/viewport.js';
import type { RunStore } from '../store/run/store.js';
import type { RunState } from '../store/run/state.js';
import { clearCalibration, openCalibration, saveRunAsCalibration, useCalibration } from '../store/calibration.js';
import type { CalibratedCycle } from '../worker/protocol.js';
import { ScanRuns } from '../scan/ScanRuns.js';

export interface PredictedPanelProps {
  run: RunStore;
  st: RunState;
  doc: ProjectDocument;
  compiled?: { overlap: ImplementationGraph; noOverlap: ImplementationGraph };
  prediction: Prediction | null;
  calibrated?: CalibratedCycle;
  taskbag: boolean;
  /** Where the plan under the lanes comes from. */
  source: 'hints' | 'calibration';
  setSource: (source: 'hints' | 'calibration') => void;
  running: boolean;
  connected: boolean;
  measured: TraceColumns;
  calibrate: () => void;
}

/** The Run view's prediction of both strategies (calibrated too), each scan's timeline, and the project's calibration: Calibrate, save, open, clear. */
export function PredictedPanel({
  run,
  st,
  doc,
  compiled,
  prediction,
  calibrated,
  taskbag,
  source,
  setSource,
  running,
  connected,
  measured,
  calibrate,
}: PredictedPanelProps) {
  const overlap = doc.options.overlap;
  const calibration = useCalibration((s) => s.calibration);
  const calibrationProblems = useCalibration((s) => s.problems);
  return (
    <>
      <h3>Predicted</h3>
      {taskbag && <div className="muted">Of the static mapping: task-bag runs place tasks at run time and are not predicted.</div>}
      {prediction ? (
        <table className="run-numbers" data-testid="run-predicted">
          <tbody>
            <tr>
              <td />
              <td>cycle</td>
              <td>iterations/s</td>
            </tr>
            {[prediction.overlap, prediction.noOverlap]
              .filter((p) => p !== undefined)
              .map((p) => (
                <tr key={String(p.overlap)} className={p.overlap === overlap ? 'on' : ''}>
                  <td>{p.overlap ? 'overlap' : 'no overlap'}</td>
                  <td>{formatDuration(p.cycleTime * 1e6)}</td>
                  <td>{p.throughput.toFixed(1)}</td>
                </tr>
              ))}
            <tr>
              <td>speedup</td>
              <td colSpan={2}>{prediction.speedup.toFixed(2)}×</td>
            </tr>
            {calibrated && (
              <tr
                data-testid="run-calibrated"
                title={`with the calibration of ${calibrated.date.slice(0, 16).replace('T', ' ')} UTC (${calibrated.machine}): ${calibrated.firings.calibrated}/${calibrated.firings.total} firings, ${calibrated.transfers.calibrated}/${calibrated.transfers.total} transfers measured`}
              >
                <td>calibrated</td>
                <td colSpan={2}>{formatDuration((overlap ? calibrated.overlap : calibrated.noOverlap) * 1e6)}</td>
              </tr>
            )}
          </tbody>
        </table>
      ) : (
        <div className="muted">No prediction: the document does not compile.</div>
      )}
      <ScanRuns doc={doc as WrittenDocument} />
      {calibrated && (
        <label className="run-field" title="The plan drawn under each lane of the timeline">
          <span>Plan from</span>
          <select data-testid="run-predicted-source" value={source} onChange={(e) => setSource(e.target.value as 'hints' | 'calibration')}>
            <option value="calibration">the calibration</option>
            <option value="hints">the cost hints</option>
          </select>
        </label>
      )}
      <div className="run-buttons">
        <button
          data-testid="run-calibrate"
          disabled={!connected || !compiled || running}
          onClick={calibrate}
          title={`Measure the connected agents: each strategy runs its fill plus 10 cycles in barrier mode, and every firing's and transfer's mean time becomes the project's calibration (as pipeloom calibrate)`}
        >
          {st.status === 'calibrating' ? `Calibrating ${st.calibration?.strategy ?? ''}…` : 'Calibrate'}
        </button>
        <button
          data-testid="run-save-calibration"
          disabled={st.status !== 'done' || !measured.length || !run.runGraph()}
          onClick={() => run.runGraph() && saveRunAsCalibration(doc, run.runGraph()!, measured, { iterations: st.iterations })}
          title="Keep this run's firing and transfer times as the project's calibration: predictions then use them instead of the cost hints"
        >
          Save as calibration
        </button>
        <label className="button" title="Open a calibration written by pipeloom calibrate">
          Open calibration…
          <input
            data-testid="run-open-calibration"
            type="file"
            accept=".json,application/json"
            hidden
            onChange={(e) => {
              const f = e.target.files?.[0];
              if (f) void f.text().then((text) => openCalibration(text, f.name));
              e.target.value = '';
            }}
          />
        </label>
        {calibration && (
          <button
            data-testid="run-clear-calibration"
            onClick={clearCalibration}
            title={`measured ${calibration.date.slice(0, 16).replace('T', ' ')} UTC on ${calibration.machine.hostname}`}
          >
            Clear calibration
          </button>
        )}
      </div>
      {st.calibration?.error && (
        <div className="run-error" data-testid="run-calibrate-error">
          {st.calibration.error}
        </div>
      )}
      {calibrationProblems.length > 0 && (
        <ul className="run-problems" data-testid="run-calibration-problems">
          {calibrationProblems.map((p, i) => (
            <li key={i} className={p.severity}>
              {p.path}: {p.message}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
