import { useProject, projectStore } from '../store/project.js';
import { useCompile } from '../store/compiler.js';
import { selectionForDiagnostic } from '../document/selection.js';
import { formatMs } from '../lib/format.js';
import { inWords } from '../document/words.js';

// The bottom bar: every diagnostic from validation and compilation, in the designer's words
// (document/words.ts; the JSON path is the tooltip); clicking one selects the element its path
// names and switches to the view that shows it.
export function Problems({ collapsed, onToggle }: { collapsed?: boolean; onToggle?: () => void }) {
  const doc = useProject((s) => s.doc);
  const { result, status, error } = useCompile((s) => s);
  const diags = result?.diagnostics ?? [];
  const errors = diags.filter((d) => d.severity === 'error').length;
  // No result for this project yet (a project just opened): nothing here is known to be ready.
  const stale = !result && status !== 'failed';
  return (
    <div className={`problems${stale ? ' stale' : ''}`} data-testid="problems" data-stale={stale || undefined}>
      <div className="problems-head">
        {onToggle && (
          <button className="icon" onClick={onToggle} title={collapsed ? 'Show problems' : 'Hide problems'} data-testid="problems-toggle">
            {collapsed ? '▴' : '▾'}
          </button>
        )}
        <span className="problems-title">Problems</span>
        <span className={`count ${stale ? 'stale' : errors ? 'error' : 'ok'}`} data-testid="problem-count">
          {stale ? 'not compiled yet' : `${errors} error${errors === 1 ? '' : 's'}, ${diags.length - errors} warning${diags.length - errors === 1 ? '' : 's'}`}
        </span>
        <span className="spacer" />
        <span className="muted" data-testid="compile-status">
          {status === 'compiling'
            ? 'compiling…'
            : status === 'failed'
              ? `compiler failed: ${error}`
              : result
                ? `compiled both strategies in ${formatMs(result.compileMs)} (with layout ${formatMs(result.ms)})`
                : ''}
        </span>
      </div>
      <div className="problems-list">
        {diags.length === 0 && result && <div className="empty">No problems: the implementation graph is ready.</div>}
        {diags.map((d, i) => {
          const sel = selectionForDiagnostic(doc, d);
          const w = inWords(doc, d);
          return (
            <div
              key={i}
              className={`diag ${d.severity}${sel ? ' clickable' : ''}`}
              data-testid="problem"
              onClick={() => sel && projectStore.getState().select(sel, { reveal: true })}
              title={`${sel ? 'Click to select the element. ' : ''}In the document: ${d.path || 'document'}`}
            >
              <span className="sev">{d.severity === 'error' ? '●' : '▲'}</span>
              <span className="msg">{w.text}</span>
              {w.hint && <span className="hint">{w.hint}</span>}
            </div>
          );
        })}
      </div>
    </div>
  );
}
