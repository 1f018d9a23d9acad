import { useEffect, useState } from 'react';
import type { ProjectDocument } from '@pipeloom/core';
import type { RunStore } from '../store/run/store.js';
import type { RunState } from '../store/run/state.js';
import type { BagPlan } from '../worker/protocol.js';
import { deployInWords } from '../document/words.js';

export interface RunControlsProps {
  run: RunStore;
  st: RunState;
  doc: ProjectDocument;
  running: boolean;
  connected: boolean;
  /** The document compiled (static mode) or the worker made its task graph (task-bag mode). */
  runnable: boolean;
  taskbag: boolean;
  /** The worker's task graph, or why task-bag mode cannot run the document. */
  bagPlan?: BagPlan;
  onOverlap?: (overlap: boolean) => void;
  deploy: () => void;
  start: () => void;
}

/** The Run view's run settings (strategy, link emulation, iterations, deploy time limit), Deploy / Start / Stop, and the problems found. */
export function RunControls({ run, st, doc, running, connected, runnable, taskbag, bagPlan, onOverlap, deploy, start }: RunControlsProps) {
  const overlap = doc.options.overlap;
  // Iterations follow the document's run options whenever those change (a load, an edit in the
  // inspector), and are the user's own between such changes. The strategy is the document's.
  const [iterText, setIterText] = useState(String(st.iterations));
  const [deployText, setDeployText] = useState(st.deployTimeout ? String(st.deployTimeout) : '');
  useEffect(() => {
    if (run.seed(doc.options)) setIterText(String(doc.options.iterations));
  }, [doc.options, run]);

  return (
    <>
      <h3>Run</h3>
      {taskbag && (
        <div className="run-mode" data-testid="run-mode" data-mode="taskbag">
          <b>Task-bag mode</b>: each task goes at run time to an idle, else the least-loaded, PE that can run it (window {doc.options.window ?? 2}, prefetch{' '}
          {doc.options.prefetch ?? 2}); the mapping is not used.
        </div>
      )}
      <label
        className="run-field check"
        title={
          taskbag
            ? 'Not used in task-bag mode: tasks are handed out at run time, there is no compiled schedule to overlap (switch the document to static mode in its run options)'
            : "The document's strategy (also in the IG view and the document inspector): both are compiled, flipping it swaps which one runs"
        }
      >
        <input
          type="checkbox"
          data-testid="run-overlap"
          checked={overlap}
          disabled={running || !onOverlap || taskbag}
          onChange={(e) => onOverlap?.(e.target.checked)}
        />
        <span>Computation-communication overlap</span>
      </label>
      <label
        className="run-field check"
        title="Each transfer lasts at least what its link in the document takes (latency + bytes / bandwidth): rehearse the cluster's timing on this machine"
      >
        <input
          type="checkbox"
          data-testid="run-emulate-links"
          checked={st.emulateLinks}
          disabled={running}
          onChange={(e) => run.setFields({ emulateLinks: e.target.checked })}
        />
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
      <label
        className="run-field"
        title="Fail a deploy still under way after this many seconds. Empty: no limit; a deploy fails only when an agent reports nothing for 30 s"
      >
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
          title={
            taskbag
              ? 'Check that some PE of the connected agents can run every node (its kernel, its requires, its buffers)'
              : 'Check the plan against what the agents serve (hosts, PEs, memory)'
          }
        >
          Deploy
        </button>
        <button
          data-testid="run-start"
          className="primary"
          disabled={!connected || !runnable || running}
          onClick={start}
          title={taskbag ? "Hand the tasks to the agents' PEs as they become ready" : 'Send the programs to the agents and start'}
        >
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
    </>
  );
}
