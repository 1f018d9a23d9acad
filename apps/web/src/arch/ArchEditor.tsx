import { useCallback, useMemo, useRef } from 'react';
import { Background, ConnectionMode, Controls, ReactFlow, type Connection, type Edge, type EdgeChange, type NodeChange } from '@xyflow/react';
import { projectStore, useProject } from '../store/project.js';
import { linkKey, type LinkKey } from '../document/records.js';
import { useMeasured, nextDragKey, pickedId, useRefitOnResize } from '../lib/canvas.js';
import { peColor } from '../lib/color.js';
import { useProblemCounts } from '../store/problems.js';
import { archNodeTypes, type HostFlowNode, type PeFlowNode } from './ArchNodes.js';
import { defaultLink, hostSize, linkLabel, peSlot, PE_SIZE } from '../document/archDefaults.js';
import { mapsTo } from '../document/targets.js';

const H = 'host:';
const P = 'pe:';
const L = 'link:';

// The architecture graph: hosts are group nodes holding their PEs; links are edges drawn
// between PEs (drag from one PE's edge to another's to add one).
export function ArchEditor() {
  const doc = useProject((s) => s.doc);
  const selection = useProject((s) => s.selection);
  const problems = useProblemCounts();
  const { sizes, tick, take } = useMeasured();
  const dragKey = useRef<string | null>(null);

  const abs = useMemo(() => {
    const m = new Map<string, { x: number; y: number }>();
    doc.arch.pes.forEach((p) => {
      const h = doc.arch.hosts.find((x) => x.id === p.host)?.position ?? { x: 0, y: 0 };
      const idx = doc.arch.pes.filter((q) => q.host === p.host).indexOf(p);
      const r = p.position ?? peSlot(idx);
      m.set(p.id, { x: h.x + r.x + PE_SIZE.width / 2, y: h.y + r.y + PE_SIZE.height / 2 });
    });
    return m;
  }, [doc.arch]);

  const nodes = useMemo(() => {
    const out: (HostFlowNode | PeFlowNode)[] = [];
    doc.arch.hosts.forEach((h, i) => {
      const size = hostSize(doc, h.id);
      out.push({
        id: H + h.id,
        type: 'host',
        position: h.position ?? { x: 0, y: i * 160 },
        width: size.width,
        height: size.height,
        selected: selection?.kind === 'host' && selection.id === h.id,
        measured: size,
        data: { host: h, pes: doc.arch.pes.filter((p) => p.host === h.id).length, errors: problems.get(`host:${h.id}`) ?? 0 },
      });
    });
    const perHost = new Map<string, number>();
    for (const p of doc.arch.pes) {
      const idx = perHost.get(p.host) ?? 0;
      perHost.set(p.host, idx + 1);
      out.push({
        id: P + p.id,
        type: 'pe',
        parentId: doc.arch.hosts.some((h) => h.id === p.host) ? H + p.host : undefined,
        position: p.position ?? peSlot(idx),
        selected: selection?.kind === 'pe' && selection.id === p.id,
        measured: sizes.get(P + p.id),
        data: {
          pe: p,
          color: peColor(doc, p.id),
          mapped: Object.entries(doc.mapping)
            .filter(([, v]) => mapsTo(v, p.id))
            .map(([k]) => k),
          errors: problems.get(`pe:${p.id}`) ?? 0,
        },
      });
    }
    return out;
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [doc, selection, problems, tick]);

  const edges: Edge[] = useMemo(
    () =>
      doc.arch.links.map((l) => {
        const k = linkKey(l);
        const a = abs.get(l.a);
        const b = abs.get(l.b);
        let sh = 'r';
        let th = 'l';
        if (a && b) {
          const dx = b.x - a.x;
          const dy = b.y - a.y;
          if (Math.abs(dy) > Math.abs(dx) * 0.6) [sh, th] = dy > 0 ? ['b', 't'] : ['t', 'b'];
          else [sh, th] = dx >= 0 ? ['r', 'l'] : ['l', 'r'];
        }
        const selected = selection?.kind === 'link' && selection.key === k;
        return {
          id: L + k,
          source: P + l.a,
          target: P + l.b,
          sourceHandle: sh,
          targetHandle: th,
          selected,
          label: linkLabel(l, selected),
          className: `link link-${l.kind}${problems.get(`link:${k}`) ? ' edge-error' : ''}`,
          labelBgPadding: [4, 2] as [number, number],
          labelStyle: { fontSize: 10 },
          data: { testid: `arch-link-${k}` },
        };
      }),
    [doc.arch.links, abs, selection, problems],
  );

  const onNodesChange = useCallback(
    (changes: NodeChange[]) => {
      take(changes);
      const st = projectStore.getState();
      const moves = [];
      for (const c of changes) {
        if (c.type !== 'position' || !c.position) continue;
        const pos = { x: Math.round(c.position.x), y: Math.round(c.position.y) };
        if (c.id.startsWith(H)) moves.push({ type: 'host/move' as const, id: c.id.slice(H.length), position: pos });
        else moves.push({ type: 'pe/move' as const, id: c.id.slice(P.length), position: { x: Math.max(8, pos.x), y: Math.max(30, pos.y) } });
      }
      if (moves.length) {
        dragKey.current ??= nextDragKey('arch');
        st.dispatch(moves, { label: 'move', coalesce: dragKey.current });
      }
      const picked = pickedId(changes);
      if (picked) st.select(picked.startsWith(H) ? { kind: 'host', id: picked.slice(H.length) } : { kind: 'pe', id: picked.slice(P.length) });
    },
    [take],
  );

  const onEdgesChange = useCallback((changes: EdgeChange[]) => {
    const st = projectStore.getState();
    const picked = pickedId(changes);
    if (picked) st.select({ kind: 'link', key: picked.slice(L.length) as LinkKey });
  }, []);

  // Delete key: one history entry. A host takes its PEs, a PE its links, so only what is not
  // already covered is removed explicitly.
  const onDelete = useCallback(({ nodes: ns, edges: es }: { nodes: { id: string }[]; edges: { id: string }[] }) => {
    const st = projectStore.getState();
    const hosts = new Set(ns.filter((n) => n.id.startsWith(H)).map((n) => n.id.slice(H.length)));
    const pes = ns
      .filter((n) => n.id.startsWith(P))
      .map((n) => n.id.slice(P.length))
      .filter((id) => !hosts.has(st.doc.arch.pes.find((p) => p.id === id)?.host ?? ''));
    const peGone = new Set([...pes, ...st.doc.arch.pes.filter((p) => hosts.has(p.host)).map((p) => p.id)]);
    const links = es
      .map((e) => e.id.slice(L.length) as LinkKey)
      .filter((k) => {
        const l = st.doc.arch.links.find((x) => linkKey(x) === k);
        return l && !peGone.has(l.a) && !peGone.has(l.b);
      });
    const changes = [
      ...links.map((key) => ({ type: 'link/remove' as const, key })),
      ...pes.map((id) => ({ type: 'pe/remove' as const, id })),
      ...[...hosts].map((id) => ({ type: 'host/remove' as const, id })),
    ];
    if (changes.length) st.dispatch(changes, { label: 'delete' });
  }, []);

  const onConnect = useCallback((c: Connection) => {
    const st = projectStore.getState();
    if (!c.source.startsWith(P) || !c.target.startsWith(P)) return;
    const a = c.source.slice(P.length);
    const b = c.target.slice(P.length);
    if (a === b) return;
    if (st.doc.arch.links.some((l) => (l.a === a && l.b === b) || (l.a === b && l.b === a))) {
      st.toast(`${a} and ${b} are already linked; select the link to edit it`, 'error');
      return;
    }
    const link = defaultLink(st.doc, a, b);
    if (st.dispatch({ type: 'link/add', link }, { label: `link ${a} - ${b}` })) st.select({ kind: 'link', key: linkKey(link) });
  }, []);

  useRefitOnResize(nodes.length, { padding: 0.2, maxZoom: 1.2 });

  return (
    <div className="canvas" data-testid="arch-canvas">
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={archNodeTypes}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        onConnect={onConnect}
        onDelete={onDelete}
        connectionMode={ConnectionMode.Loose}
        onNodeDragStop={() => {
          dragKey.current = null;
          projectStore.getState().seal();
        }}
        onPaneClick={() => projectStore.getState().select(null)}
        deleteKeyCode={['Delete', 'Backspace']}
        fitView
        fitViewOptions={{ padding: 0.2, maxZoom: 1.2 }}
        minZoom={0.1}
        maxZoom={1.5}
        proOptions={{ hideAttribution: true }}
      >
        <Background gap={16} size={1} />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
