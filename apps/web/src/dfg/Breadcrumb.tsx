import { projectStore, useProject } from '../store/project.js';
import { levelAt } from '../document/graphs.js';

// Where the DFG canvas is: `app > s1 > inner`, each step a composite instance entered; a
// step's button goes back up to it. Inside a def the def's name is shown: editing there edits
// every instance of it.
export function Breadcrumb() {
  const doc = useProject((s) => s.doc);
  const level = useProject((s) => s.level);
  const at = levelAt(doc, level);
  const go = (k: number) => projectStore.getState().setLevel(level.slice(0, k));
  return (
    <nav className="breadcrumb" data-testid="breadcrumb">
      <button className={level.length ? 'link' : 'link here'} onClick={() => go(0)} data-testid="crumb-0">
        app
      </button>
      {level.map((id, i) => (
        <span key={i}>
          <span className="muted"> › </span>
          <button className={i === level.length - 1 ? 'link here' : 'link'} onClick={() => go(i + 1)} data-testid={`crumb-${i + 1}`}>
            {id}
          </button>
        </span>
      ))}
      {at?.def !== undefined && (
        <span className="muted" data-testid="crumb-def" title="Edits here change the def, so every instance of it">
          {' '}
          (defs.{at.def}
          {at.inline?.length ? ` › ${at.inline.join(' › ')}` : ''})
        </span>
      )}
    </nav>
  );
}
