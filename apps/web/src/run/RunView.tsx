/**
 * The Run view: connect to agents, deploy, start and stop a run, watch it live on the canvas
 * timeline beside the predicted plan, export the trace.
 *
 * data-testid hooks (for e2e):
 *   run-urls, run-token          agent URLs (comma separated) and token fields
 *   run-connect, run-disconnect  buttons; run-connection shows the status (data-status; reconnecting
 *                                names the hosts whose connection closed, until they are back)
 *   run-agent-<host>             one per connected agent, listing its PEs
 *   run-overlap, run-iterations  strategy checkbox (the document's options.overlap; disabled in task-bag mode) and iteration count
 *   run-mode                     task-bag mode's line (data-mode taskbag; absent in static mode); run-bag-problems: why the mode cannot run the document
 *   run-bag                      a task-bag run's live bag: rows run-bag-committed, -requeued, -discarded, -recomputed, -depth, -in-flight (data-value each)
 *   run-bag-per-pe               after a task-bag run: tasks each PE committed (rows data-pe, data-value)
 *   run-emulate-links            link emulation checkbox
 *   run-deploy-timeout           the deploy time limit in seconds (empty: none, the default)
 *   run-deploy-progress          while a run deploys: one row per host (data-host, data-step: its steps in words, or ready)
 *   run-deploy, run-start, run-stop, run-export   buttons
 *   run-view                     data-revision (the document's), data-compiled-revision and data-compiles (the compile worker's)
 *   run-outcome                  the bar at the top: data-state none | checked | running | calibrating | passed | failed | stopped
 *   run-freshness                data-state: none | current | modified (the document changed since Deploy / the run)
 *   run-estimate                 the run's predicted duration for the iterations set (data-seconds)
 *   run-status                   data-status: idle | checked | running | stopping | done | failed | stopped | calibrating
 *   run-cycle, run-throughput, run-cycle-time, run-events   live numbers (throughput in iterations/s)
 *   run-utilisation              per-lane utilisation table
 *   run-problems                 plan vs agents problems (task-bag: nodes no connected PE can run, each PE with why); run-failure: host, PE, node, iteration, why; run-stopped after Stop
 *   run-check                    consumer check result after a run (data-result: passed | failed)
 *   run-predicted                predicted cycle time and throughput of both strategies
 *   run-calibrated               the same predicted with the project's calibration (row, when it has one)
 *   run-compare                  measured / predicted per cycle (row run-compare-cycle) and per lane (rows run-compare-lane, data-lane)
 *   run-predicted-source         the plan drawn under the lanes: hints (cost hints) | calibration
 *   run-scan-timeline-<id>       one per scan node: opens its scan timeline (src/scan/ScanRuns.tsx)
 *   run-calibrate                measures the connected agents (core calibration); run-calibrate-error when it failed
 *   run-save-calibration, run-open-calibration, run-clear-calibration   calibration buttons / file input
 *   timeline-canvas              the canvas (data-events: measured events)
 *   timeline-lanes               data-lanes (tracks drawn) and data-lanes-with-events (tracks with measured events)
 *   timeline-tooltip, timeline-follow, timeline-flows (data-flows on the canvas), timeline-range (selection statistics)
 *
 * With `?bench` in the page URL, `window.__pipeloomBench` drives the timeline for
 * `npm run bench:timeline` (see e2e/bench/timeline.bench.mjs).
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import { type DeployProgress, type ProjectDocument, type ImplementationGraph, type Prediction, type WrittenDocument, TraceColumns, toChromeTrace, traceMetadata, stepsText, TRACE_FILE_LIMITS } from '@pipeloom/core';
import { Timeline, type TimelineHandle } from '../timeline/Timeline.js';
import { formatDuration } from '../timeline/viewport.js';
import { busyPerCycle, steadyCycles } from '../timeline/stats.js';
import { useCompile } from '../store/compiler.js';
import { appRun, useRun, type RunStore } from '../store/run/store.js';
import { freshness, type BagNumbers as BagNumbersT, type DocumentRevision, type RunState } from '../store/run/state.js';
import { installBenchHook } from './bench.js';
import { adoptCalibration, clearCalibration, openCalibration, saveRunAsCalibration, useCalibration } from '../store/calibration.js';
import './run.css';
import { deployInWords } from '../document/words.js';
import { ScanRuns } from '../scan/ScanRuns.js';

export interface RunViewProps {
  document: ProjectDocument;
  compiled?: { overlap: ImplementationGraph; noOverlap: ImplementationGraph };
  /** Agents to prefill (from `?agent=...&token=...`). */
  agents?: { url: string; token?: string }[];
  /** The predictor's result; by default the compile worker's (never computed on the main thread). */
  prediction?: Prediction | null;
  /** The run store (tests pass their own). */
  run?: RunStore;
  /** The document's revision: a run's check and results belong to the revision they ran. */
  revision?: DocumentRevision;
  /** Sets the document's strategy (its options.overlap, one undo step); absent: shown, not editable. */
  onOverlap?: (overlap: boolean) => void;
}

export function RunView({ document: doc, compiled, agents, prediction: given, run = appRun, revision, onOverlap }: RunViewProps) {
  const st = useRun(run, (s) => s);
  const timeline = useRef<TimelineHandle>(null);
  const overlap = doc.options.overlap;

  useEffect(() => {
    if (revision) run.observe(revision);
  }, [revision, run]);

  // Prefill the connection once from the query string, and connect when it carries the token
  // (the URL `npm start` prints): the designer opens ready to run.
  useEffect(() => {
    const s = run.store.getState();
    if (!s.urls && agents?.length) {
      const token = s.token || agents.find((a) => a.token)?.token || '';
      run.setFields({ urls: agents.map((a) => a.url).join(', '), token });
      if (token) void run.connect();
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  // Iterations follow the document's run options whenever those change (a load, an edit in the
  // inspector), and are the user's own between such changes. The strategy is the document's.
  const [iterText, setIterText] = useState(String(st.iterations));
  const [deployText, setDeployText] = useState(st.deployTimeout ? String(st.deployTimeout) : '');
  useEffect(() => {
    if (run.seed(doc.options)) setIterText(String(doc.options.iterations));
  }, [doc.options, run]);

  useEffect(() => (new URLSearchParams(location.search).has('bench') ? installBenchHook(run, () => timeline.current) : undefined), [run]);

  const fromWorker = useCompile((s) => s.result?.prediction ?? null);
  const compiles = useCompile((s) => s.compiles);
  const compiledRevision = useCompile((s) => s.revision);
  const calibrated = useCompile((s) => s.result?.calibrated);
  // generic.work firings last their cost hint's time in a run, as from the CLI.
  const standIns = useCompile((s) => s.result?.standIns);
  const calibration = useCalibration((s) => s.calibration);
  const calibrationProblems = useCalibration((s) => s.problems);
  const prediction = given === undefined ? fromWorker : given;
  const strategy = prediction ? (overlap ? prediction.overlap : prediction.noOverlap) : null;
  // The plan under the lanes: from the calibration when the project has one (the run's own
  // scale: this machine's measured times), else from the cost hints.
  const [sourceChoice, setSource] = useState<'hints' | 'calibration' | null>(null);
  const source = calibrated && sourceChoice !== 'hints' ? 'calibration' : 'hints';
  const plannedEvents = strategy ? (source === 'calibration' && calibrated ? (overlap ? calibrated.timeline.overlap : calibrated.timeline.noOverlap) : strategy.timeline) : null;
  const predicted = useMemo(() => {
    if (!plannedEvents) return undefined;
    const c = new TraceColumns();
    c.append(plannedEvents);
    return c;
  }, [plannedEvents]);
  const plannedCycle = strategy ? (source === 'calibration' && calibrated ? (overlap ? calibrated.overlap : calibrated.noOverlap) : strategy.cycleTime) : 0;
  // The run's duration for the iterations set: the plan's run time moved by a cycle per iteration more or fewer.
  const estimate = useMemo(() => {
    if (!strategy) return null;
    const base = source === 'calibration' && calibrated ? { runTime: overlap ? calibrated.runTime.overlap : calibrated.runTime.noOverlap, iterations: calibrated.runTime.iterations } : strategy;
    return Math.max(plannedCycle, base.runTime + (st.iterations - base.iterations) * plannedCycle);
  }, [strategy, source, calibrated, overlap, plannedCycle, st.iterations]);

  const ig = compiled ? (overlap ? compiled.overlap : compiled.noOverlap) : undefined;
  // Task-bag mode runs the task graph the worker made, not the compiled programs: the mapping and
  // the strategy play no part, so the static plan's estimate and comparison are not shown for it.
  const taskbag = doc.options.mode === 'taskbag';
  const bagPlan = useCompile((s) => s.result?.bag);
  const bagGraph = taskbag ? bagPlan?.graph : undefined;
  const runnable = taskbag ? bagGraph !== undefined : ig !== undefined;
  const deploy = () => (taskbag ? bagGraph && run.deployBag(bagGraph) : ig && run.deploy(ig));
  const start = () => {
    if (taskbag) {
      if (bagGraph) void run.startBag(bagGraph, { iterations: st.iterations, window: doc.options.window, prefetch: doc.options.prefetch, emulateDevices: standIns });
    } else if (ig) void run.start(ig, { emulateDevices: standIns });
  };
  const shownBag = st.mode === 'taskbag';
  const measured = run.measured();
  const running = st.status === 'running' || st.status === 'stopping' || st.status === 'calibrating';
  const fresh = freshness(st);
  const connected = st.connection === 'connected';
  const live = st.live;

  const exportTrace = () => {
    const events = measured.length ? measured.toEvents() : (strategy?.timeline ?? []);
    const graph = (measured.length ? run.runGraph() : null) ?? ig;
    // The file says what it shows: document and hash, strategy, sync mode, calibration, agents.
    const metadata = traceMetadata(doc, { source: measured.length ? 'measured' : 'predicted', overlap: graph?.overlap ?? overlap, sync: measured.length ? (st.sync ?? 'self-timed') : strategy?.sync, agents: measured.length ? st.agents : undefined });
    const blob = new Blob([JSON.stringify(toChromeTrace(events, graph, metadata))], { type: 'application/json' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = `${(doc.name || 'run').replace(/[^A-Za-z0-9_.-]+/g, '-')}-${measured.length ? 'trace' : 'predicted'}.json`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  };

  const calibrate = () => {
    if (!compiled) return;
    void run.calibrate(doc, compiled).then((cal) => {
      if (!cal) return;
      adoptCalibration(cal);
      setSource('calibration');
    });
  };

  return (
    <div className="run-view" data-testid="run-view" data-compiles={compiles} data-revision={revision?.revision} data-compiled-revision={compiledRevision}>
      <Outcome st={st} live={live} fresh={fresh} estimate={running || taskbag ? null : estimate} source={source} />
      <section className="run-side">
        <h3>Agents</h3>
        <label className="run-field">
          <span>URLs</span>
          <input data-testid="run-urls" value={st.urls} placeholder="ws://127.0.0.1:7070, ws://host2:7070" disabled={running} onChange={(e) => run.setFields({ urls: e.target.value })} />
        </label>
        <label className="run-field">
          <span>Token</span>
          <input data-testid="run-token" type="password" value={st.token} disabled={running} onChange={(e) => run.setFields({ token: e.target.value })} />
        </label>
        <div className="run-buttons">
          <button data-testid="run-connect" disabled={running || st.connection === 'connecting'} onClick={() => void run.connect()}>
            {connected ? 'Reconnect' : 'Connect'}
          </button>
          <button data-testid="run-disconnect" disabled={!(connected || st.connection === 'reconnecting') || running} onClick={() => run.disconnect()}>
            Disconnect
          </button>
          <span className={`run-conn ${st.connection}`} data-testid="run-connection" data-status={st.connection}>
            {st.connection === 'reconnecting' ? `reconnecting to ${st.lost?.join(', ') ?? 'the agents'}…` : st.connection}
          </span>
        </div>
        {st.connectError && <div className="run-error">{st.connectError}</div>}
        {st.agents.length > 0 && (
          // Collapsible, so Live and Checks stay in view on a small screen with many agents.
          <details className="run-agents" data-testid="run-agents" open={st.agents.length <= 2}>
            <summary>
              {st.agents.length} agent{st.agents.length === 1 ? '' : 's'}: {st.agents.map((a) => a.host).join(', ')}
            </summary>
            {st.agents.map((a) => (
              <div key={a.host} className="run-agent" data-testid={`run-agent-${a.host}`}>
                <b>{a.host}</b> <span className="muted">{a.url}</span>
                <ul>
                  {a.pes.map((p) => (
                    <li key={p.id} title={p.capabilities?.softwareWhy}>
                      <code>{p.id}</code> {p.kind} · {p.name}
                      {p.backend ? ` (${p.backend})` : ''}
                      {p.capabilities?.software ? ' · software' : ''}
                    </li>
                  ))}
                </ul>
              </div>
            ))}
          </details>
        )}

        <h3>Run</h3>
        {taskbag && (
          <div className="run-mode" data-testid="run-mode" data-mode="taskbag">
            <b>Task-bag mode</b>: each task goes at run time to an idle, else the least-loaded, PE that can run it (window {doc.options.window ?? 2}, prefetch {doc.options.prefetch ?? 2}); the mapping is not used.
          </div>
        )}
        <label
          className="run-field check"
          title={taskbag ? 'Not used in task-bag mode: tasks are handed out at run time, there is no compiled schedule to overlap (switch the document to static mode in its run options)' : "The document's strategy (also in the IG view and the document inspector): both are compiled, flipping it swaps which one runs"}
        >
          <input type="checkbox" data-testid="run-overlap" checked={overlap} disabled={running || !onOverlap || taskbag} onChange={(e) => onOverlap?.(e.target.checked)} />
          <span>Computation-communication overlap</span>
        </label>
        <label className="run-field check" title="Each transfer lasts at least what its link in the document takes (latency + bytes / bandwidth): rehearse the cluster's timing on this machine">
          <input type="checkbox" data-testid="run-emulate-links" checked={st.emulateLinks} disabled={running} onChange={(e) => run.setFields({ emulateLinks: e.target.checked })} />
          <span>Emulate link speeds</span>
        </label>
        <label className="run-field">
          <span>Iterations</span>
          <input
            data-testid="run-iterations"
            type="number"
            min={1}
            step={1}
            value={iterText}
            disabled={running}
            className={/^[1-9]\d*$/.test(iterText.trim()) ? undefined : 'invalid'}
            title="A whole number of iterations, at least 1"
            onChange={(e) => {
              // Keep what is typed (an empty field mid-edit); apply it once it is a count.
              setIterText(e.target.value);
              if (/^[1-9]\d*$/.test(e.target.value.trim())) run.setFields({ iterations: Number(e.target.value) });
            }}
            onBlur={() => setIterText(String(run.store.getState().iterations))}
          />
        </label>
        <label className="run-field" title="Fail a deploy still under way after this many seconds. Empty: no limit; a deploy fails only when an agent reports nothing for 30 s">
          <span>Deploy time limit (s)</span>
          <input
            data-testid="run-deploy-timeout"
            type="number"
            min={0}
            placeholder="none"
            value={deployText}
            disabled={running}
            className={deployText.trim() === '' || Number(deployText) >= 0 ? undefined : 'invalid'}
            onChange={(e) => {
              setDeployText(e.target.value);
              const v = e.target.value.trim();
              if (v === '') run.setFields({ deployTimeout: 0 });
              else if (Number.isFinite(Number(v)) && Number(v) >= 0) run.setFields({ deployTimeout: Number(v) });
            }}
          />
        </label>
        <div className="run-buttons">
          <button
            data-testid="run-deploy"
            disabled={!connected || !runnable || running}
            onClick={deploy}
            title={taskbag ? 'Check that some PE of the connected agents can run every node (its kernel, its requires, its buffers)' : 'Check the plan against what the agents serve (hosts, PEs, memory)'}
          >
            Deploy
          </button>
          <button data-testid="run-start" className="primary" disabled={!connected || !runnable || running} onClick={start} title={taskbag ? 'Hand the tasks to the agents\' PEs as they become ready' : 'Send the programs to the agents and start'}>
            Start
          </button>
          <button data-testid="run-stop" disabled={!running} onClick={() => run.stop()}>
            Stop
          </button>
        </div>
        {taskbag && bagPlan && !bagPlan.graph ? (
          <ul className="run-problems" data-testid="run-bag-problems">
            {bagPlan.diagnostics.map((d, i) => (
              <li key={i} className={d.severity}>
                Task-bag mode cannot run this document: {d.message}
                {d.hint && <div className="muted">{d.hint}</div>}
              </li>
            ))}
          </ul>
        ) : (
          !runnable && <div className="run-error">The document does not compile; fix the problems listed below first.</div>
        )}
        {st.problems.length > 0 && (
          <ul className="run-problems" data-testid="run-problems">
            {st.problems.map(deployInWords).map((p, i) => (
              <li key={i} className={st.problems[i].severity}>
                {p.message}
                {p.hint && <div className="muted">{p.hint}</div>}
              </li>
            ))}
          </ul>
        )}

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
              <td title={shownBag ? 'Iterations whose tasks are all committed (about: committed tasks over tasks per iteration)' : undefined}>{shownBag ? 'Iteration' : 'Cycle'}</td>
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
              <td title={shownBag ? 'Elapsed time over the iterations complete (iterations overlap as the window allows)' : undefined}>{shownBag ? 'Per iteration' : 'Cycle time'}</td>
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
        {!running && !shownBag && live.events > 0 && predicted && <Compare measured={measured} predicted={predicted} st={st} fill={run.runGraph()?.fillCycles ?? 0} planIterations={strategy?.iterations ?? 0} plannedCycle={plannedCycle} />}
        <div className="run-buttons">
          <button data-testid="run-export" onClick={exportTrace} disabled={!measured.length && !strategy} title="Chrome trace JSON (open in Perfetto or chrome://tracing)">
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
              {[prediction.overlap, prediction.noOverlap].filter((p) => p !== undefined).map((p) => (
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
                <tr data-testid="run-calibrated" title={`with the calibration of ${calibrated.date.slice(0, 16).replace('T', ' ')} UTC (${calibrated.machine}): ${calibrated.firings.calibrated}/${calibrated.firings.total} firings, ${calibrated.transfers.calibrated}/${calibrated.transfers.total} transfers measured`}>
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
            <button data-testid="run-clear-calibration" onClick={clearCalibration} title={`measured ${calibration.date.slice(0, 16).replace('T', ' ')} UTC on ${calibration.machine.hostname}`}>
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
      </section>
      <section className="run-main">
        <Timeline ref={timeline} measured={measured} predicted={taskbag ? undefined : predicted} graph={run.runGraph()} live={st.streaming} version={st.traceVersion} />
      </section>
    </div>
  );
}

type Fresh = ReturnType<typeof freshness>;

/** The bar at the top: what the run came to (pass/fail and the first failing check), whether it is of the document as it is, and how long a run should take. */
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

function Outcome({ st, live, fresh, estimate, source }: { st: RunState; live: RunState['live']; fresh: Fresh; estimate: number | null; source: 'hints' | 'calibration' }) {
  const state =
    st.status === 'calibrating' ? 'calibrating' : st.status === 'running' || st.status === 'stopping' ? 'running' : st.status === 'stopped' ? 'stopped' : st.result ? (st.result.ok ? 'passed' : 'failed') : st.status === 'failed' ? 'failed' : st.status === 'checked' ? 'checked' : 'none';
  return (
    <header className={`run-outcome ${state}${fresh === 'modified' ? ' stale' : ''}`} data-testid="run-outcome" data-state={state}>
      <div className="run-outcome-line">
        {state === 'none' && <span className="muted">No run yet: connect to the agents, then Start.</span>}
        {state === 'checked' && (
          <span className="run-ok">{st.mode === 'taskbag' ? 'Checked: for every node some PE of the connected agents has its kernel, meets its requires and holds its buffers.' : 'Deployed: the agents serve every host and PE of the plan, with room for its buffers.'}</span>
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
          <span className="run-estimate" data-testid="run-estimate" data-seconds={estimate} title={source === 'calibration' ? "Predicted with the project's calibration (this machine's measured times)" : 'Predicted from the kernels\' cost hints; Calibrate for this machine\'s times'}>
            estimated {formatDuration(estimate * 1e6)} for {st.iterations} iterations ({source === 'calibration' ? 'calibrated' : 'cost hints'})
          </span>
        )}
        {fresh !== 'none' && (
          <span className={`run-fresh ${fresh}`} data-testid="run-freshness" data-state={fresh} title={fresh === 'modified' ? 'Deploy or Start again to check and run the document as it is' : undefined}>
            {fresh === 'modified' ? 'modified since deploy: shown results are of an earlier revision' : 'of the document as it is'}
          </span>
        )}
      </div>
      {st.status === 'stopped' && (
        <div className="run-stopped" data-testid="run-stopped">
          {st.mode === 'taskbag' && st.bag ? `Stopped with ${st.bag.committed} of ${st.bag.tasks} tasks committed.` : `Stopped at cycle ${live.cycle} of ${live.cycles}.`} The trace so far is kept below and can be exported.
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

/** Measured against predicted, per cycle and per lane (busy time per steady cycle): where the run departs from its plan. */
function Compare({ measured, predicted, st, fill, planIterations, plannedCycle }: { measured: TraceColumns; predicted: TraceColumns; st: RunState; fill: number; planIterations: number; plannedCycle: number }) {
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
          <tr key={r.key} data-testid="run-compare-lane" data-lane={r.key} data-ratio={r.measured !== undefined && r.predicted ? r.measured / r.predicted : undefined} title="Busy time (firings and transfers) per steady cycle">
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

function CheckResult({ result, failure, status }: { result: NonNullable<ReturnType<RunStore['store']['getState']>['result']>; failure?: { node?: string; message: string }; status: string }) {
  // A failure that is not a check (a lost agent, a refused deploy) is shown by the failure box alone.
  if (status === 'stopped' || (!result.ok && !failure?.node)) return null;
  const passed = result.ok;
  return (
    <div className={`run-check ${passed ? 'passed' : 'failed'}`} data-testid="run-check" data-result={passed ? 'passed' : 'failed'}>
      {passed ? (
        <>
          <b>Checks passed</b>: {result.bag ? `${result.bag.committed} tasks, ${result.cycles} iterations in task-bag mode` : `${result.cycles} cycles`} in {result.seconds.toFixed(2)} s
          {result.dropped > 0 && <>, {result.dropped} trace events dropped by the agents</>}
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

/** A task-bag run's bag: live while it runs, its final counts and each PE's tasks after. */
function BagNumbers({ bag, perPe }: { bag: BagNumbersT; perPe?: Record<string, number> }) {
  const rows: { id: string; label: string; value: number; text?: string; title: string }[] = [
    { id: 'committed', label: 'Tasks', value: bag.committed, text: `${bag.committed} / ${bag.tasks} committed`, title: 'Tasks committed (exactly one result each) of all the run has: one per node and iteration' },
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

function summarise(values: Record<string, number | number[] | string>): string {
  return Object.entries(values)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? `[${v.length} values]` : typeof v === 'number' ? +v.toPrecision(6) : v}`)
    .join(', ');
}
