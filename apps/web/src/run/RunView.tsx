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
import { type ProjectDocument, type ImplementationGraph, type Prediction, TraceColumns, toChromeTrace, traceMetadata } from '@pipeloom/core';
import { Timeline, type TimelineHandle } from '../timeline/Timeline.js';
import { useCompile } from '../store/compiler.js';
import { appRun, useRun, type RunStore } from '../store/run/store.js';
import { freshness, type DocumentRevision } from '../store/run/state.js';
import { installBenchHook } from './bench.js';
import { adoptCalibration } from '../store/calibration.js';
import './run.css';
import { Outcome } from './Outcome.js';
import { Writes } from './Writes.js';
import { AgentsPanel } from './AgentsPanel.js';
import { RunControls } from './RunControls.js';
import { LivePanel } from './LivePanel.js';
import { PredictedPanel } from './PredictedPanel.js';

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

  useEffect(() => (new URLSearchParams(location.search).has('bench') ? installBenchHook(run, () => timeline.current) : undefined), [run]);

  const fromWorker = useCompile((s) => s.result?.prediction ?? null);
  const compiles = useCompile((s) => s.compiles);
  const compiledRevision = useCompile((s) => s.revision);
  const calibrated = useCompile((s) => s.result?.calibrated);
  // generic.work firings last their cost hint's time in a run, as from the CLI.
  const standIns = useCompile((s) => s.result?.standIns);
  const prediction = given === undefined ? fromWorker : given;
  const strategy = prediction ? (overlap ? prediction.overlap : prediction.noOverlap) : null;
  // The plan under the lanes: from the calibration when the project has one (the run's own
  // scale: this machine's measured times), else from the cost hints.
  const [sourceChoice, setSource] = useState<'hints' | 'calibration' | null>(null);
  const source = calibrated && sourceChoice !== 'hints' ? 'calibration' : 'hints';
  const plannedEvents = strategy
    ? source === 'calibration' && calibrated
      ? overlap
        ? calibrated.timeline.overlap
        : calibrated.timeline.noOverlap
      : strategy.timeline
    : null;
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
    const base =
      source === 'calibration' && calibrated
        ? { runTime: overlap ? calibrated.runTime.overlap : calibrated.runTime.noOverlap, iterations: calibrated.runTime.iterations }
        : strategy;
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
      if (bagGraph)
        void run.startBag(bagGraph, { iterations: st.iterations, window: doc.options.window, prefetch: doc.options.prefetch, emulateDevices: standIns });
    } else if (ig) void run.start(ig, { emulateDevices: standIns });
  };
  const measured = run.measured();
  const running = st.status === 'running' || st.status === 'stopping' || st.status === 'calibrating';
  const fresh = freshness(st);
  const connected = st.connection === 'connected';

  const exportTrace = () => {
    const events = measured.length ? measured.toEvents() : (strategy?.timeline ?? []);
    const graph = (measured.length ? run.runGraph() : null) ?? ig;
    // The file says what it shows: document and hash, strategy, sync mode, calibration, agents.
    const metadata = traceMetadata(doc, {
      source: measured.length ? 'measured' : 'predicted',
      overlap: graph?.overlap ?? overlap,
      sync: measured.length ? (st.sync ?? 'self-timed') : strategy?.sync,
      agents: measured.length ? st.agents : undefined,
    });
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
      <Outcome st={st} live={st.live} fresh={fresh} estimate={running || taskbag ? null : estimate} source={source} />
      <section className="run-side">
        <AgentsPanel run={run} st={st} running={running} connected={connected} />
        <RunControls
          run={run}
          st={st}
          doc={doc}
          running={running}
          connected={connected}
          runnable={runnable}
          taskbag={taskbag}
          bagPlan={bagPlan}
          onOverlap={onOverlap}
          deploy={deploy}
          start={start}
        />
        <LivePanel
          run={run}
          st={st}
          running={running}
          measured={measured}
          predicted={predicted}
          planIterations={strategy?.iterations ?? 0}
          plannedCycle={plannedCycle}
          canExport={measured.length > 0 || !!strategy}
          exportTrace={exportTrace}
        />
        <Writes writes={st.result?.writes} />
        <PredictedPanel
          run={run}
          st={st}
          doc={doc}
          compiled={compiled}
          prediction={prediction}
          calibrated={calibrated}
          taskbag={taskbag}
          source={source}
          setSource={setSource}
          running={running}
          connected={connected}
          measured={measured}
          calibrate={calibrate}
        />
      </section>
      <section className="run-main">
        <Timeline
          ref={timeline}
          measured={measured}
          predicted={taskbag ? undefined : predicted}
          graph={run.runGraph()}
          live={st.streaming}
          version={st.traceVersion}
        />
      </section>
    </div>
  );
}
