import { useMemo } from 'react';
import { RunView } from '../run/RunView.js';
import { useProject } from '../store/project.js';
import { useCompile } from '../worker/client.js';
import { agentsFromQuery } from './query.js';

// The Run view is its own module (apps/web/src/run); the shell mounts it as a tab with the
// document, both compiled strategies and the agents named in the page's query string.
export function RunTab() {
  const doc = useProject((s) => s.doc);
  const result = useCompile((s) => s.result);
  const compiled = useMemo(
    () => (result?.overlap && result?.noOverlap ? { overlap: result.overlap.ig, noOverlap: result.noOverlap.ig } : undefined),
    [result],
  );
  const agents = useMemo(agentsFromQuery, []);
  return <RunView document={doc} compiled={compiled} agents={agents} />;
}
