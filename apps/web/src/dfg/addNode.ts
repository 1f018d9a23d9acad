import type { AppNode } from '@pipeloom/core';
import { findKernel } from '@pipeloom/kernels';
import { projectStore } from '../store/project.js';
import { graphAt, isApp, levelAt, type GraphAt } from '../document/graphs.js';
import { freshNodeId, writtenParams } from '../document/kernels.js';
import { newScanParams } from '../document/scanNode.js';

// Adding a node to the DFG canvas: from the palette (a click or a drop), at the graph shown.

export const KERNEL_MIME = 'application/pipeloom-kernel';

/** The graph a change of the canvas names: none for the app graph. */
export const at$ = (at: GraphAt | undefined) => (at && !isApp(at) ? { at } : {});

/** The graph the canvas shows now (the level's), never undefined: the app graph when the level went stale. */
function shownAt(): GraphAt | undefined {
  const { doc, level } = projectStore.getState();
  return levelAt(doc, level);
}

/** The palette's Scan entry (not a kernel id: those are namespaced, `a.b`). */
export const SCAN_ITEM = 'scan';

/**
 * Adds a node of `kernelId` with default params to the graph shown, at a flow position (default:
 * beside its last node); returns its id. `SCAN_ITEM` adds a scan macro-node with its defaults.
 */
export function addKernelNode(kernelId: string, position?: { x: number; y: number }): string | null {
  const kernel = kernelId === SCAN_ITEM ? undefined : findKernel(kernelId);
  if (!kernel && kernelId !== SCAN_ITEM) return null;
  const { doc, dispatch, select } = projectStore.getState();
  const at = shownAt();
  const g = graphAt(doc, at) ?? doc.app;
  const last = g.nodes.at(-1)?.position;
  const p = position ?? (last ? { x: last.x + 300, y: last.y } : { x: 40, y: 80 });
  const id = freshNodeId(doc, kernel ? kernelId : 'scan', at);
  const where = { x: Math.round(p.x), y: Math.round(p.y) };
  const node: AppNode = kernel
    ? { id, kernel: kernelId, params: writtenParams(kernel, {}), position: where }
    : { id, type: 'scan', params: newScanParams(), position: where };
  const ok = dispatch({ type: 'node/add', node, ...at$(at) }, { label: `add ${id}` });
  if (ok) select({ kind: 'node', id, ...at$(at) });
  return ok ? id : null;
}
