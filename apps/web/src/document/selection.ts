import type { WrittenDocument } from '@pipeloom/core';
import { edgeKey, linkKey, type Selection, type ViewId } from './records.js';
import { graphAt, type GraphAt } from './graphs.js';

// A diagnostic's `path` (`app.nodes[2].params.width`, `mapping.b`, `arch.links[0]`) names
// the element to select and the view that shows it. Paths into composites name where the
// element is written (`defs.stage.nodes[1]`, `app.nodes[4].graph.edges[0]`); a parameter's
// (`params.N`, `params.N.value`) selects its row of the parameter panel.

const GRAPH_HEAD = /^(?:app|defs\.([A-Za-z_][A-Za-z0-9_]*))/;
const STEP = /^\.(nodes|edges)\[(\d+)\](\.graph(?=\.))?/;

/** A node or edge inside a composite (or any node or edge written by index), from a path that walks into graphs. */
function graphSelection(doc: WrittenDocument, path: string): Selection | null {
  const head = GRAPH_HEAD.exec(path);
  if (!head) return null;
  const at: GraphAt = head[1] !== undefined ? { def: head[1], inline: [] } : { inline: [] };
  let rest = path.slice(head[0].length);
  for (;;) {
    const g = graphAt(doc, at);
    const m = STEP.exec(rest);
    if (!g || !m) return null;
    const i = Number(m[2]);
    const where =
      at.def === undefined && !at.inline!.length
        ? {}
        : { at: { ...(at.def !== undefined ? { def: at.def } : {}), ...(at.inline!.length ? { inline: at.inline } : {}) } };
    if (m[1] === 'edges') return g.edges[i] ? { kind: 'edge', key: edgeKey(g.edges[i]), ...where } : null;
    const n = g.nodes[i];
    if (!n) return null;
    if (!m[3]) return { kind: 'node', id: n.id, ...where };
    at.inline!.push(n.id);
    rest = rest.slice(m[0].length);
  }
}

const LIST = /^(app\.nodes|app\.edges|arch\.hosts|arch\.pes|arch\.links)(?:\[([^\]]+)\]|\.([A-Za-z0-9_@:\-]+))/;

function at<T>(list: T[], ref: string, idOf: (x: T) => string): T | undefined {
  const clean = ref.replace(/^["']|["']$/g, '');
  if (/^\d+$/.test(clean)) return list[Number(clean)];
  return list.find((x) => idOf(x) === clean);
}

export function selectionForPath(doc: WrittenDocument, path: string): Selection | null {
  const p = /^params\.([A-Za-z_][A-Za-z0-9_]*)/.exec(path);
  if (p) return doc.params && Object.hasOwn(doc.params, p[1]) ? { kind: 'param', name: p[1] } : null;
  if (path.startsWith('defs.') || /^app\.nodes\[\d+\]\.graph\./.test(path)) return graphSelection(doc, path);
  const m = LIST.exec(path);
  if (m) {
    const ref = m[2] ?? m[3];
    switch (m[1]) {
      case 'app.nodes': {
        const n = at(doc.app.nodes, ref, (x) => x.id);
        return n ? { kind: 'node', id: n.id } : null;
      }
      case 'app.edges': {
        const e = at(doc.app.edges, ref, edgeKey);
        return e ? { kind: 'edge', key: edgeKey(e) } : null;
      }
      case 'arch.hosts': {
        const h = at(doc.arch.hosts, ref, (x) => x.id);
        return h ? { kind: 'host', id: h.id } : null;
      }
      case 'arch.pes': {
        const p = at(doc.arch.pes, ref, (x) => x.id);
        return p ? { kind: 'pe', id: p.id } : null;
      }
      case 'arch.links': {
        const l = at(doc.arch.links, ref, linkKey);
        return l ? { kind: 'link', key: linkKey(l) } : null;
      }
    }
  }
  const mm = /^mapping(?:\.([^.[\]]+)|\[["']?([^\]"']+)["']?\])/.exec(path);
  if (mm) return { kind: 'mapping', node: mm[1] ?? mm[2] };
  if (path === 'mapping') return null;
  if (path.startsWith('options')) return { kind: 'options' };
  return null;
}

export function viewForSelection(s: Selection): ViewId {
  switch (s.kind) {
    case 'node':
    case 'edge':
    case 'param':
      return 'dfg';
    case 'host':
    case 'pe':
    case 'link':
      return 'arch';
    case 'mapping':
      return 'mapping';
    case 'options':
      return 'ig';
  }
}

export const sameSelection = (a: Selection | null, b: Selection | null) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The element a diagnostic names: its path, or for a path that stops at a whole section
 * (`mapping`), the node the message quotes ("node "c" is not mapped").
 */
export function selectionForDiagnostic(doc: WrittenDocument, d: { path: string; message: string }): Selection | null {
  const s = selectionForPath(doc, d.path);
  if (s) return s;
  if (d.path === 'mapping') {
    const m = /node "([^"]+)"/.exec(d.message);
    if (m) return { kind: 'mapping', node: m[1] };
  }
  return null;
}
