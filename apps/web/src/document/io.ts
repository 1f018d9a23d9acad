import type { AppNode, Diagnostic, WrittenDocument } from '@pipeloom/core';
import { nodePorts, portType } from './kernels.js';

// Source and sink nodes (`io.read`, `io.write`) as the designer shows them: the file their
// `path` param names, as written (`images:frames/%05d.png`, a root the agent serves), and the
// shape. The designer never reads an agent's disk: what it knows of a file is what the
// document says (and, once run, what the agent reports it wrote).

export const IO_SOURCE = 'io.read';
export const IO_SINK = 'io.write';

/** A source's or sink's file as the document writes it. */
export interface IoFile {
  role: 'source' | 'sink';
  /** The `path` param as written ('' while unset). */
  path: string;
  /** The `shape` param as written (`48x64`); '' where it comes from the file's header or the node feeding it. */
  shape: string;
}

export function ioFile(node: AppNode): IoFile | undefined {
  const role = node.kernel === IO_SOURCE ? 'source' : node.kernel === IO_SINK ? 'sink' : undefined;
  if (!role) return undefined;
  const text = (k: string) => {
    const v = node.params?.[k];
    return typeof v === 'string' || typeof v === 'number' ? String(v).trim() : '';
  };
  return { role, path: text('path'), shape: text('shape') };
}

/** As the agent's `--data NAME=DIR` names a root: a letter, then letters, digits, - or _. */
const ROOT = /^([A-Za-z][A-Za-z0-9_-]*):(.*)$/;

/** What is wrong with a written `path`, and the fix; undefined when it names a file under a root. */
export function dataPathProblem(path: string, role: IoFile['role']): { message: string; hint: string } | undefined {
  const example = role === 'source' ? 'data:frames/%05d.png' : 'out:maps/%05d.png';
  const fix = `write root:relative/path (e.g. "${example}"), a root the agent serves (pipeloom agent --data NAME=DIR)`;
  if (!path) return { message: `names no file (its path is empty)`, hint: fix };
  const m = ROOT.exec(path);
  if (!m) return { message: `path "${path}" names no data root`, hint: fix };
  const rel = m[2];
  if (!rel) return { message: `path "${path}" names root "${m[1]}" but no file in it`, hint: fix };
  if (rel.startsWith('/') || rel.startsWith('\\'))
    return {
      message: `path "${path}" is absolute inside root "${m[1]}"`,
      hint: `write the file relative to the root: "${m[1]}:${rel.replace(/^[/\\]+/, '')}"`,
    };
  if (rel.split(/[/\\]/).includes('..'))
    return { message: `path "${path}" climbs out of root "${m[1]}" (..)`, hint: `name a file inside the root, or serve its directory as a root of its own` };
  return undefined;
}

/**
 * Each source or sink whose `path` names no file under a data root, as a problem on the node
 * where it is written (the app graph, a def, a composite's inline graph).
 */
export function ioProblems(doc: WrittenDocument): Diagnostic[] {
  const out: Diagnostic[] = [];
  const walk = (nodes: readonly AppNode[], at: string) =>
    nodes.forEach((n, i) => {
      if (n.graph) walk(n.graph.nodes, `${at}.nodes[${i}].graph`);
      const file = ioFile(n);
      if (!file) return;
      const p = dataPathProblem(file.path, file.role);
      if (p) out.push({ path: `${at}.nodes[${i}].params.path`, message: `${file.role} ${n.id}: ${p.message}`, hint: p.hint, severity: 'error' });
    });
  walk(doc.app.nodes, 'app');
  for (const [name, def] of Object.entries(doc.defs ?? {})) walk(def.nodes, `defs.${name}`);
  return out;
}

/**
 * What a source or sink node shows: its file as written, and its shape: as written (evaluated,
 * `resolved`), else the one its port's type gives (a sink's from the node feeding it, where the
 * kernel computes it), else where it will come from.
 */
export function ioView(node: AppNode, resolved: AppNode = node): IoFile | undefined {
  const file = ioFile(node);
  if (!file) return undefined;
  const shape = ioFile(resolved)?.shape || file.shape;
  if (shape) return { ...file, shape };
  const ports = nodePorts(resolved);
  const port = file.role === 'source' ? ports.outputs[0] : ports.inputs[0];
  const typed = port ? portType(resolved, port.name, file.role === 'source' ? 'out' : 'in').type?.shape : undefined;
  return { ...file, shape: typed?.length ? typed.join('x') : file.role === 'source' ? "from the file's header" : 'from its input' };
}

/** The root a written path names (`images` of `images:frames/a.png`). */
export const dataRoot = (path: string): string | undefined => ROOT.exec(path)?.[1];
