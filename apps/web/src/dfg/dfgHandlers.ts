import { useCallback, useRef, type Dispatch, type SetStateAction } from 'react';
import type { Connection, Edge, EdgeChange, FinalConnectionState, NodeChange } from '@xyflow/react';
import { projectStore } from '../store/project.js';
import type { Change } from '../document/changes.js';
import { graphAt, graphKey } from '../document/graphs.js';
import { nextDragKey } from '../lib/canvas.js';
import { closesLoop, connectionProblem, type PortContext } from '../document/kernels.js';
import type { Resolve } from '../store/resolve.js';
import { GROUP, sameGraph, type Where } from './levelFlow.js';
import { at$ } from './addNode.js';

// What the DFG canvas does with React Flow's events: moves and picks, selecting an edge,
// Delete, and connections checked as they are drawn (refused with the reason).

export interface DfgHandlersInput {
  built: { where: Map<string, Where> };
  mapping: boolean;
  picked: ReadonlySet<string>;
  setPicked: Dispatch<SetStateAction<ReadonlySet<string>>>;
  /** Takes React Flow's measured sizes (useMeasured). */
  take: (changes: NodeChange[]) => void;
  resolve: Resolve;
}

export function useDfgHandlers({ built, mapping, picked, setPicked, take, resolve }: DfgHandlersInput) {
  const dragKey = useRef<string | null>(null);

  const onNodesChange = useCallback(
    (changes: NodeChange[]) => {
      take(changes);
      const st = projectStore.getState();
      const moves: Change[] = [];
      let next: Set<string> | undefined;
      let primary: Where | undefined;
      for (const c of changes) {
        const w = 'id' in c ? built.where.get(c.id) : undefined;
        if (c.type === 'position' && c.position && w?.kind === 'node') {
          // Children of an expanded composite are placed relative to its box, below its header.
          const inner = c.id.includes('/');
          const p = inner ? { x: c.position.x - GROUP.pad, y: c.position.y - GROUP.top } : c.position;
          moves.push({ type: 'node/move', id: w.id, ...at$(w.at), position: { x: Math.round(p.x), y: Math.round(p.y) } });
        }
        if (c.type === 'select') {
          next ??= new Set(picked);
          if (c.selected) {
            next.add(c.id);
            primary = w;
          } else next.delete(c.id);
        }
      }
      if (moves.length) {
        dragKey.current ??= nextDragKey('dfg');
        st.dispatch(moves, { label: 'move', coalesce: dragKey.current });
      }
      if (next) setPicked(next);
      if (primary?.kind === 'node') st.select(mapping ? { kind: 'mapping', node: primary.flatId } : { kind: 'node', id: primary.id, ...at$(primary.at) });
    },
    [take, mapping, built, picked],
  );

  const onEdgesChange = useCallback(
    (changes: EdgeChange[]) => {
      for (const c of changes) {
        if (c.type !== 'select' || !c.selected) continue;
        const w = built.where.get(c.id);
        if (w?.kind === 'edge') projectStore.getState().select({ kind: 'edge', key: w.key, ...at$(w.at) });
      }
    },
    [built],
  );

  // Delete key: one history entry; edges of deleted nodes go with their node's removal.
  const onDelete = useCallback(
    ({ nodes: ns, edges: es }: { nodes: { id: string }[]; edges: { id: string }[] }) => {
      const gone = ns.map((n) => built.where.get(n.id)).filter((w): w is Extract<Where, { kind: 'node' }> => w?.kind === 'node');
      const goneIds = new Set(gone.map((w) => `${graphKey(w.at)}:${w.id}`));
      // A node inside a deleted composite goes with it.
      const kept = gone.filter((w) => !gone.some((o) => w.flatId.startsWith(`${o.flatId}/`)));
      const edgeChanges = new Map<string, Change>();
      for (const e of es) {
        const w = built.where.get(e.id);
        if (w?.kind !== 'edge') continue;
        const g = graphAt(projectStore.getState().doc, w.at);
        const edge = g?.edges.find((x) => `${x.from.node}.${x.from.port}->${x.to.node}.${x.to.port}` === w.key);
        if (edge && (goneIds.has(`${graphKey(w.at)}:${edge.from.node}`) || goneIds.has(`${graphKey(w.at)}:${edge.to.node}`))) continue;
        edgeChanges.set(`${graphKey(w.at)}:${w.key}`, { type: 'edge/remove', key: w.key, ...at$(w.at) });
      }
      const changes: Change[] = [...edgeChanges.values(), ...kept.map((w) => ({ type: 'node/remove' as const, id: w.id, ...at$(w.at) }))];
      if (changes.length) projectStore.getState().dispatch(changes, { label: kept.length ? `delete ${kept.map((w) => w.id).join(', ')}` : 'delete edge' });
      setPicked(new Set());
    },
    [built],
  );

  /** The graph both ends are in and their ids there, or why the connection is refused. */
  const ends = useCallback(
    (source: string, target: string) => {
      const a = built.where.get(source);
      const b = built.where.get(target);
      if (a?.kind !== 'node' || b?.kind !== 'node') return { problem: 'both ends must be nodes' };
      if (!sameGraph(a.at, b.at))
        return { problem: 'the two nodes are in different graphs: enter the composite to connect inside it, or connect to its ports' };
      return { a, b };
    },
    [built],
  );

  const problemOf = useCallback(
    (source: string, sourceHandle: string, target: string, targetHandle: string) => {
      const r = ends(source, target);
      if (!('a' in r) || !r.a || !r.b) return { problem: r.problem ?? 'refused' };
      const ctx: PortContext = { at: r.a.at, prefix: r.a.flatId.slice(0, r.a.flatId.length - r.a.id.length), resolve };
      const from = { node: r.a.id, port: sourceHandle };
      const to = { node: r.b.id, port: targetHandle };
      return { problem: connectionProblem(projectStore.getState().doc, from, to, ctx), from, to, at: r.a.at };
    },
    [ends, resolve],
  );

  const onConnect = useCallback(
    (c: Connection) => {
      const st = projectStore.getState();
      const r = problemOf(c.source, c.sourceHandle ?? '', c.target, c.targetHandle ?? '');
      if (r.problem || !('from' in r) || !r.from || !r.to) {
        st.toast(`Connection refused: ${r.problem}`, 'error');
        return;
      }
      // An edge closing a loop needs initial tokens to start it: one iteration of zeros, set in the inspector.
      const loop = closesLoop(st.doc, r.from, r.to, { at: r.at, prefix: '', resolve });
      st.dispatch(
        { type: 'edge/add', edge: { from: r.from, to: r.to, ...(loop ? { delay: 1, init: 0 } : {}) }, ...at$(r.at) },
        { label: `connect ${r.from.node} -> ${r.to.node}` },
      );
      if (loop)
        st.toast(`${r.from.node} -> ${r.to.node} closes a loop: it carries 1 initial token of zeros (delay 1, init 0); change them in the inspector`, 'info');
    },
    [problemOf, resolve],
  );

  // Live feedback while dragging a connection: the handle under the pointer turns red when
  // the connection would be refused; releasing there says why.
  const isValidConnection = useCallback(
    (c: Connection | Edge) => !problemOf(c.source, c.sourceHandle ?? '', c.target, c.targetHandle ?? '').problem,
    [problemOf],
  );

  const onConnectEnd = useCallback(
    (_: MouseEvent | TouchEvent, state: FinalConnectionState) => {
      if (state.isValid !== false || !state.fromHandle || !state.toHandle) return;
      const [a, b] = state.fromHandle.type === 'source' ? [state.fromHandle, state.toHandle] : [state.toHandle, state.fromHandle];
      if (a.type === b.type) {
        projectStore.getState().toast(`Connection refused: connect an output (right side) to an input (left side)`, 'error');
        return;
      }
      const r = problemOf(a.nodeId, a.id ?? '', b.nodeId, b.id ?? '');
      if (r.problem) projectStore.getState().toast(`Connection refused: ${r.problem}`, 'error');
    },
    [problemOf],
  );

  /** A drag ends: the next one is another undo step. */
  const onNodeDragStop = () => {
    dragKey.current = null;
    projectStore.getState().seal();
  };

  return { onNodesChange, onEdgesChange, onDelete, onConnect, isValidConnection, onConnectEnd, onNodeDragStop };
}
