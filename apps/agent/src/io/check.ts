import { accessSync, constants } from 'node:fs';
import type { PeProgram, SinkWrite } from '@pipeloom/core';
import { framesOf, IO_READ, IO_WRITE, ioFormat, type Params } from '@pipeloom/kernels';
import { DataError, disagreement, frameOf, inspect, naming } from './files.js';
import { splitDataPath, writeDir, type DataRoot } from './roots.js';

// The agent's check of a deploy's io nodes before anything is allocated: each source's file
// exists inside its root and agrees with the params, a sequence or video has the frames the
// run asks for (or loops or holds), each sink's root takes writes. Each refusal names the
// node, the path as written and the fix.

export interface IoNode {
  node: string;
  kernel: string;
  params: Params;
}

/** Why `host` refuses these io nodes, or undefined. `iterations` undefined: a task bag's (no frame count to check). `only`: nodes whose root this agent serves. */
export function dataRefusal(host: string, nodes: Iterable<IoNode>, roots: readonly DataRoot[], iterations?: number, servedOnly = false): string | undefined {
  for (const n of nodes) {
    if (n.kernel !== IO_READ && n.kernel !== IO_WRITE) continue;
    const written = String(n.params.path ?? '');
    const name = written.slice(0, Math.max(0, written.indexOf(':')));
    if (servedOnly && !roots.some((r) => r.name === name)) continue;
    const problem = nodeProblem(n, roots, iterations);
    if (problem) return `agent ${host}: node ${n.node} (${n.kernel}): ${problem}`;
  }
  return undefined;
}

function nodeProblem(n: IoNode, roots: readonly DataRoot[], iterations?: number): string | undefined {
  const written = String(n.params.path ?? '');
  if (!written) return 'param path is empty; name a file as root:relative/path';
  if (!ioFormat(n.params)) return `param format: "auto" finds no format from "${written}"; set format`;
  try {
    if (n.kernel === IO_WRITE) {
      naming(written, undefined, () => {
        const { root, file } = splitDataPath(roots, written);
        if (root.readOnly)
          throw new DataError(written, `data root "${root.name}" is read-only on this agent (--data-ro)`, 'write to a root the agent serves with --data');
        naming(written, root.name, () => {
          const dir = writeDir(root, written, file);
          try {
            accessSync(nearest(dir), constants.W_OK);
          } catch {
            throw new DataError(
              written,
              `data root "${root.name}" is not writable by the agent's user`,
              'give the agent write access, or write to another root',
            );
          }
        });
      });
      return undefined;
    }
    const wanted = iterations === undefined ? undefined : iterations * framesOf(n.params);
    const seen = inspect(roots, n.params, wanted ?? 1);
    const differs = disagreement(n.params, seen.info);
    if (differs) return `${written} ${differs.problem}; ${differs.hint}`;
    const end = String(n.params.end ?? 'stop');
    const frames = seen.frames?.count ?? seen.info.frames;
    if (wanted !== undefined && frames !== undefined && frameOf(wanted - 1, frames, end) === undefined)
      return `${written} has ${frames} frame${frames === 1 ? '' : 's'}, the run asks for ${wanted}; set end to loop or hold, add frames, or run fewer iterations`;
    return undefined;
  } catch (e) {
    if (e instanceof DataError) return e.message;
    throw e;
  }
}

/** The nearest existing directory of `dir` (writeDir's result may not exist yet). */
function nearest(dir: string): string {
  let d = dir;
  for (let i = 0; i < 64; i++) {
    try {
      accessSync(d, constants.F_OK);
      return d;
    } catch {
      d = d.replace(/[/\\][^/\\]*$/, '') || '/';
    }
  }
  return d;
}

/** The io firings of a static deploy's programs, one per node. */
export function* fireActions(programs: readonly PeProgram[]): Generator<IoNode> {
  const seen = new Set<string>();
  for (const program of programs)
    for (const phase of program.phases ?? [])
      for (const a of phase.actions ?? [])
        if (a.op === 'fire' && (a.kernel === IO_READ || a.kernel === IO_WRITE) && !seen.has(a.node)) {
          seen.add(a.node);
          yield { node: a.node, kernel: a.kernel, params: a.params ?? {} };
        }
}

/**
 * What this host's sinks wrote, from their last reports (io.write reports its totals each
 * firing: path, bytes, files, iterations); the reports themselves are left to the caller.
 */
export function sinkWrites(host: string, programs: readonly PeProgram[], reports: Iterable<{ node: string; values: Record<string, unknown> }>): SinkWrite[] {
  const peOf = new Map<string, string>();
  for (const program of programs)
    for (const phase of program.phases ?? []) for (const a of phase.actions ?? []) if (a.op === 'fire' && a.kernel === IO_WRITE) peOf.set(a.node, program.pe);
  const out: SinkWrite[] = [];
  for (const r of reports) {
    const pe = peOf.get(r.node);
    const { path, bytes, files, iterations } = r.values;
    if (pe === undefined || typeof path !== 'string') continue;
    out.push({ node: r.node, host, pe, path, bytes: Number(bytes), files: Number(files), iterations: Number(iterations) });
  }
  return out;
}
