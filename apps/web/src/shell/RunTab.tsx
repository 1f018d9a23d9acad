import { useCallback, useMemo } from 'react';
import type { ProjectDocument } from '@pipeloom/core';
import { RunView } from '../run/RunView.js';
import { projectStore, useProject } from '../store/project.js';
import { useCompile } from '../store/compiler.js';
import { agentsFromQuery } from '../store/query.js';

// The Run view is its own module (apps/web/src/run); the shell mounts it as a tab with the
// document and its revision, both compiled strategies and the agents named in the page's query
// string. The strategy checkbox edits the document's options.overlap, as the IG view's does.
export function RunTab() {
  const doc = useProject((s) => s.doc);
  const revision = useProject((s) => s.revision);
  const loads = useProject((s) => s.loads);
  const rev = useMemo(() => ({ revision, loads }), [revision, loads]);
  const result = useCompile((s) => s.result);
  const compiled = useMemo(() => (result?.overlap && result?.noOverlap ? { overlap: result.overlap.ig, noOverlap: result.noOverlap.ig } : undefined), [result]);
  const agents = useMemo(agentsFromQuery, []);
  const onOverlap = useCallback(
    (overlap: boolean) => projectStore.getState().dispatch({ type: 'options/update', patch: { overlap } }, { label: overlap ? 'overlap on' : 'overlap off' }),
    [],
  );
  // The Run view reads the document only through core (analyze lowers a node's PE list into
  // single-PE shares) and the compiled IGs; its prop predates lists.
  return <RunView document={doc as ProjectDocument} compiled={compiled} agents={agents} revision={rev} onOverlap={onOverlap} />;
}
