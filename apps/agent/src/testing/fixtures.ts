import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { format } from 'node:util';
import WebSocket from 'ws';
import {
  analyze,
  bagGraph,
  compile,
  type BagGraph,
  type ImplementationGraph,
  type ProjectDocument,
  Coordinator,
  type SocketLike,
  type SyncMode,
  type TraceEvent,
} from '@pipeloom/core';
import { nodeClock } from '../cli/agents.js';
import { main } from '../cli/main.js';
import { pipeloomBin } from '../local/spawn.js';

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

/** The document's task-bag graph, or a throw naming its diagnostics. */
export function bagGraphOrThrow(doc: ProjectDocument): BagGraph {
  const { model, diagnostics } = analyze(doc);
  if (!model) throw new Error(JSON.stringify(diagnostics));
  const g = bagGraph(model);
  if (!g.graph) throw new Error(JSON.stringify(g.diagnostics));
  return g.graph;
}

export const wsConnect = (url: string, headers?: Record<string, string>) => new WebSocket(url, { headers, maxPayload: 1 << 30 }) as unknown as SocketLike;

export function connect(urls: string[], token: string): Promise<Coordinator> {
  return Coordinator.connect(urls, { token, connect: (u) => wsConnect(u), clock: nodeClock });
}

/**
 * Runs a long `ig` and kills `victim`'s agent process (SIGKILL) once the consumer C has fired
 * more than 5 times. Returns the run's result, every event the victim had streamed before the
 * kill and the last cycle they reached, and the milliseconds from the kill to the result.
 */
export async function runUntilKilled(
  c: Coordinator,
  ig: ImplementationGraph,
  victim: { host: string; process: { kill(signal: NodeJS.Signals): boolean } },
  sync: SyncMode,
) {
  let killedAt = 0;
  let consumed = 0;
  let lastCycle = 0;
  const streamed: TraceEvent[] = [];
  const handle = c.run(ig, {
    iterations: 1_000_000,
    sync,
    onEvents: (events) => {
      if (killedAt) return;
      for (const e of events) {
        if (e.host === victim.host) {
          streamed.push(e);
          lastCycle = Math.max(lastCycle, e.cycle);
        }
        if (e.kind === 'fire' && e.node === 'C') consumed++;
      }
      if (consumed > 5) {
        killedAt = performance.now();
        victim.process.kill('SIGKILL');
      }
    },
  });
  const result = await handle.done;
  return { result, killed: killedAt > 0, stoppedAfter: performance.now() - killedAt, streamed, lastCycle };
}

/** Runs the `pipeloom` CLI to its end without blocking the test's event loop (the process's exit is the event). */
export function pipeloomAsync(...args: string[]): Promise<CliResult> {
  return pipeloomWithEnv({}, ...args);
}

/** pipeloomAsync with these environment variables added. */
export function pipeloomWithEnv(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [pipeloomBin(), ...args], { cwd: root, env: { ...process.env, EGL_PLATFORM: 'surfaceless', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** The CLI's output and exit code, from a process or from `main` in this one. */
export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** The in-process run before the current one ends (their output must not mix). */
let inProcess: Promise<unknown> = Promise.resolve();

/**
 * Runs `pipeloom ...args` as `main(args)` in this process, with what it writes to stdout and
 * stderr captured: for tests of a command's logic (its output, its exit code), without a
 * process start each. Runs one at a time. A throw (a stack trace where a process would have
 * printed one) comes back as status 1 with the stack on stderr. Tests about the process itself
 * (signals, stdio, the bin's own checks) and `--kernels` (kernel packages register in the
 * process) use pipeloomAsync.
 */
export function pipeloomInProcess(...args: string[]): Promise<CliResult> {
  return pipeloomInProcessWithEnv({}, ...args);
}

/** pipeloomInProcess with these environment variables set while it runs. */
export function pipeloomInProcessWithEnv(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  const run = inProcess.then(() => capture(env, args));
  inProcess = run.catch(() => {});
  return run;
}

async function capture(env: Record<string, string>, args: string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const saved = { log: console.log, info: console.info, warn: console.warn, error: console.error, out: process.stdout.write, err: process.stderr.write };
  const toOut = (...xs: unknown[]) => void (stdout += `${format(...xs)}\n`);
  const toErr = (...xs: unknown[]) => void (stderr += `${format(...xs)}\n`);
  console.log = console.info = toOut;
  console.warn = console.error = toErr;
  const text = (chunk: string | Uint8Array) => (typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
  process.stdout.write = ((chunk: string | Uint8Array) => ((stdout += text(chunk)), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => ((stderr += text(chunk)), true)) as typeof process.stderr.write;
  const savedEnv = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  let status: number;
  try {
    status = await main(args);
  } catch (e) {
    stderr += `${e instanceof Error ? e.stack : String(e)}\n`;
    status = 1;
  } finally {
    Object.assign(console, { log: saved.log, info: saved.info, warn: saved.warn, error: saved.error });
    process.stdout.write = saved.out;
    process.stderr.write = saved.err;
    for (const [k, v] of Object.entries(savedEnv)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  return { status, stdout, stderr };
}
