import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { compile, type ImplementationGraph, type ProjectDocument, Coordinator, type SocketLike } from '@pipeloom/core';
import { nodeClock } from '../cli/agents.js';

// Shared by the agent tests and benchmarks: small documents and a coordinator over `ws`.

export const root = fileURLToPath(new URL('../../../../', import.meta.url));

export function example(name: string): ProjectDocument {
  return JSON.parse(readFileSync(`${root}examples/${name}.json`, 'utf8')) as ProjectDocument;
}

/** P-I-I-C mapped as the paper's Fig 12 at a small matrix size. */
export function piic(opts: { size?: number; nbLoop?: number; iterations?: number } = {}): ProjectDocument {
  const doc = example('piic');
  const size = opts.size ?? 64;
  for (const n of doc.app.nodes) {
    n.params = { ...n.params, width: size, height: size };
    if ('nb_loop' in n.params) n.params.nb_loop = opts.nbLoop ?? 5;
  }
  doc.options = { ...doc.options, iterations: opts.iterations ?? 20 };
  return doc;
}

export function compileOrThrow(doc: ProjectDocument, overlap: boolean): ImplementationGraph {
  const r = compile(doc, { overlap });
  if (!r.ok) throw new Error(r.diagnostics.map((d) => `${d.path}: ${d.message}`).join('\n'));
  return r.ig;
}

export const wsConnect = (url: string, headers?: Record<string, string>) => new WebSocket(url, { headers, maxPayload: 1 << 30 }) as unknown as SocketLike;

export function connect(urls: string[], token: string): Promise<Coordinator> {
  return Coordinator.connect(urls, { token, connect: (u) => wsConnect(u), clock: nodeClock });
}
