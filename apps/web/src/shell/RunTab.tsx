import { lazy, Suspense, type ComponentType } from 'react';
import { useProject } from '../store/project.js';
import { useCompile } from '../worker/client.js';
import { agentsFromQuery } from './query.js';

// The Run view is its own module (apps/web/src/run); the shell mounts it as a tab with the
// document, both compiled strategies and the agents named in the page's query string.
type RunViewProps = Record<string, unknown>;
const modules = import.meta.glob<{ RunView: ComponentType<RunViewProps> }>('../run/RunView.tsx');
const load = Object.values(modules)[0];
const RunView = load ? lazy(() => load().then((m) => ({ default: m.RunView }))) : null;

export function RunTab() {
  const doc = useProject((s) => s.doc);
  const result = useCompile((s) => s.result);
  const compiled = result?.overlap && result?.noOverlap ? { overlap: result.overlap.ig, noOverlap: result.noOverlap.ig } : undefined;
  if (!RunView) return <div className="canvas-empty">The Run view is not part of this build.</div>;
  return (
    <Suspense fallback={<div className="canvas-empty">Loading the Run view…</div>}>
      <RunView document={doc} compiled={compiled} agents={agentsFromQuery()} />
    </Suspense>
  );
}
