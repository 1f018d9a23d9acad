import type { Diagnostic, ProjectDocument } from '@pipeloom/core';
import { findKernel, formatShape, framesOf, IO_READ, IO_WRITE, ioFormat, portsFor, withDefaults, type Params } from '@pipeloom/kernels';
import { DataError, disagreement, inspect } from './files.js';
import type { DataRoot } from './roots.js';

// What the CLI fills in before compiling: an io.read node's shape and dtype from its file's
// header (when the command is given the roots with --data), and an io.write node's from the
// node feeding it. What the document wrote is kept; only what it left out is filled, and a
// header that disagrees with what it wrote is a diagnostic naming the node.

export function fillIo(doc: ProjectDocument, roots: readonly DataRoot[] | undefined): { doc: ProjectDocument; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const nodes = doc.app.nodes.map((n) => ({ ...n, params: n.params ? { ...n.params } : n.params }));
  const at = (i: number) => `app.nodes[${i}].params`;
  nodes.forEach((n, i) => {
    if (n.kernel !== IO_READ || !roots) return;
    const p = (n.params ?? {}) as Params;
    const written = String(p.path ?? '');
    const format = ioFormat(p);
    if (!written || !format || format === 'raw' || !roots.some((r) => written.startsWith(`${r.name}:`))) return;
    try {
      const { info } = inspect(roots, p, 1);
      const differs = disagreement(p, info);
      if (differs) {
        diagnostics.push({ path: at(i), message: `node ${n.id} (io.read): ${written} ${differs.problem}`, hint: differs.hint, severity: 'error' });
        return;
      }
      n.params = { ...p, shape: String(p.shape ?? '') || formatShape(info.shape), dtype: String(p.dtype ?? '') || info.dtype };
    } catch (e) {
      if (!(e instanceof DataError)) throw e;
      diagnostics.push({ path: `${at(i)}.path`, message: `node ${n.id} (io.read): ${e.path}: ${e.problem}`, hint: e.hint, severity: 'error' });
    }
  });
  const byId = new Map(nodes.map((n) => [n.id, n]));
  nodes.forEach((n, i) => {
    if (n.kernel !== IO_WRITE) return;
    const p = (n.params ?? {}) as Params;
    if (String(p.shape ?? '').trim() && p.dtype !== undefined && p.kind !== undefined) return;
    const port = ioFormat(p) === 'y4m' ? 'y' : 'in';
    const edge = doc.app.edges.find((e) => e.to.node === n.id && e.to.port === port);
    const from = edge && byId.get(edge.from.node);
    const spec = from?.kernel ? findKernel(from.kernel) : undefined;
    if (!edge || !from || !spec) return;
    try {
      const params = withDefaults(spec, (from.params ?? {}) as Params);
      const out = portsFor(spec, params).outputs.find((o) => o.name === edge.from.port);
      if (!out) return;
      const t = out.type(params);
      n.params = {
        ...p,
        // One frame's shape: a sink writing several frames per firing takes them outermost.
        shape: String(p.shape ?? '').trim() || formatShape(framesOf(p) > 1 ? t.shape.slice(1) : t.shape),
        ...(p.dtype === undefined ? { dtype: t.element } : {}),
        ...(p.kind === undefined ? { kind: t.kind } : {}),
      };
    } catch {
      // The producer's own params are wrong: its diagnostic says so at compile.
    }
  });
  return { doc: { ...doc, app: { ...doc.app, nodes } }, diagnostics };
}
