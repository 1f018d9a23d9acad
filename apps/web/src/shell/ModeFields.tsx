import type { DocumentOptions, ExecutionMode } from '@pipeloom/core';
import { projectStore } from '../store/project.js';
import { CheckField, NumberField, SelectField } from '../forms/fields.js';

// The run options' execution mode: static (PACCO's compiled programs on the
// mapping) or task bag (tasks given to capable PEs at run time), and the task bag's window and
// prefetch. Each edit is an options/update change, one undo step; switching back to static
// keeps window and prefetch in the document, so nothing set is lost.

/** The defaults core applies when the document leaves them out (document/types.ts DocumentOptions). */
const DEFAULT_WINDOW = 2;
const DEFAULT_PREFETCH = 2;
const MAX_TASKBAG = 64;

const MODES: readonly { value: ExecutionMode; label: string }[] = [
  { value: 'static', label: 'static (mapping)' },
  { value: 'taskbag', label: 'task bag (dynamic)' },
];

const update = (patch: Partial<DocumentOptions>, label: string, coalesce?: string) =>
  projectStore.getState().dispatch({ type: 'options/update', patch }, { label, coalesce });

export function ModeFields({ options }: { options: DocumentOptions }) {
  const mode = options.mode ?? 'static';
  const prefetch = options.prefetch ?? DEFAULT_PREFETCH;
  return (
    <>
      <SelectField
        label="Execution mode"
        value={mode}
        options={MODES}
        testid="option-mode"
        onCommit={(m) => update({ mode: m }, m === 'taskbag' ? 'task-bag mode' : 'static mode')}
      />
      {mode === 'taskbag' ? (
        <>
          <NumberField
            label="Window (iterations in flight)"
            value={options.window ?? DEFAULT_WINDOW}
            min={1}
            max={MAX_TASKBAG}
            integer
            testid="option-window"
            title="At most this many iterations have tasks in the bag or running at once"
            onCommit={(window, coalesce) => update({ window }, 'window', coalesce)}
          />
          <CheckField
            label="Unbounded prefetch (the Boss/Worker paper's literal reading)"
            value={prefetch === 'unbounded'}
            testid="option-prefetch-unbounded"
            onCommit={(on) => update({ prefetch: on ? 'unbounded' : DEFAULT_PREFETCH }, on ? 'prefetch unbounded' : 'prefetch bounded')}
          />
          {prefetch !== 'unbounded' && (
            <NumberField
              label="Prefetch (tasks a PE holds)"
              value={prefetch}
              min={1}
              max={MAX_TASKBAG}
              integer
              testid="option-prefetch"
              title="Tasks given to a PE and not done: 2 lets its next inputs arrive while one runs"
              onCommit={(p, coalesce) => update({ prefetch: p }, 'prefetch', coalesce)}
            />
          )}
          <p className="help" data-testid="option-mode-help">
            Each firing of a node for an iteration is a task, given at run time to an idle (else the least-loaded) PE meeting the node's Requires. The mapping
            is kept but not used.
          </p>
        </>
      ) : null}
    </>
  );
}
