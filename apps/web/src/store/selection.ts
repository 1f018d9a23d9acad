import type { ProjectDocument } from '@pipeloom/core';
import { edgeKey, linkKey, type Selection, type ViewId } from './records.js';

// A diagnostic's `path` (`app.nodes[2].params.width`, `mapping.b`, `arch.links[0]`) names
// the element to select and the view that shows it.

const LIST = /^(app\.nodes|app\.edges|arch\.hosts|arch\.pes|arch\.links)(?:\[([^\]]+)\]|\.([A-Za-z0-9_@:\-]+))/;

function at<T>(list: T[], ref: string, idOf: (x: T) => string): T | undefined {
  const clean = ref.replace(/^["']|["']$/g, '');
  if (/^\d+$/.test(clean)) return list[Number(clean)];
  return list.find((x) => idOf(x) === clean);
}

export function selectionForPath(doc: ProjectDocument, path: string): Selection | null {
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
export function selectionForDiagnostic(doc: ProjectDocument, d: { path: string; message: string }): Selection | null {
  const s = selectionForPath(doc, d.path);
  if (s) return s;
  if (d.path === 'mapping') {
    const m = /node "([^"]+)"/.exec(d.message);
    if (m) return { kind: 'mapping', node: m[1] };
  }
  return null;
}
