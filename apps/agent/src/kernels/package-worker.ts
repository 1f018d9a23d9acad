import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { findKernel, type Kernel, type PortSpec } from '@pipeloom/kernels';
import { importKernelPackages } from './load.js';
import { callKey, Doing, describeCalls, type PackageCall, type CallResult } from './package-calls.js';

// The thread that runs kernel packages' code for the agent's and the CLI's main thread
// (kernels/package-host.ts): it imports the packages, then answers calls of their functions
// (port types, rates, costs...) one at a time. Before each call it says what it is doing in
// shared memory, so that the main thread can name the call it stops when one overruns.

const { state, doing, reply } = workerData as { state: SharedArrayBuffer; doing: SharedArrayBuffer; reply: MessagePort };
const flag = new Int32Array(state);
const now = new Doing(doing);

/** The function a call names on the kernel, or undefined. */
function target(k: Kernel, fn: string): ((...args: unknown[]) => unknown) | undefined {
  if (fn === 'cost' || fn === 'ports' || fn === 'values' || fn === 'cpu') return k[fn] as ((...args: unknown[]) => unknown) | undefined;
  if (fn === 'expects.derive') return k.expects?.derive as ((...args: unknown[]) => unknown) | undefined;
  const m = /^(inputs|outputs)\.(.+)\.(type|rate)$/.exec(fn);
  const port = m ? k[m[1] as 'inputs' | 'outputs'].find((p) => p.name === m[2]) : undefined;
  const f = port?.[m![3] as 'type' | 'rate'];
  return typeof f === 'function' ? (f as (...args: unknown[]) => unknown) : undefined;
}

/** A port list as plain data: each type and rate evaluated at the params (a declared `ports` result). */
function portsData(list: PortSpec[], params: Record<string, unknown>) {
  return list.map((p) => {
    let type: CallResult;
    try {
      type = { ok: p.type(params as never) };
    } catch (e) {
      type = { error: messageOf(e) };
    }
    return {
      name: p.name,
      ...(p.description ? { description: p.description } : {}),
      ...(p.repeat ? { repeat: p.repeat } : {}),
      rate: typeof p.rate === 'function' ? p.rate(params as never) : p.rate,
      type,
    };
  });
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e)).slice(0, 500);

function call(c: PackageCall): CallResult {
  const k = findKernel(c.kernel) as Kernel | undefined;
  const f = k && target(k, c.fn);
  if (!k || !f) return { error: `kernel "${c.kernel}" has no function ${c.fn}` };
  now.start(c);
  try {
    const args = c.fn.endsWith('.type') ? [c.args[0], c.args[1] ?? undefined] : c.args;
    let value = f(...args);
    // A CPU twin fills its firing's outputs: they go back with its report.
    if (c.fn === 'cpu') value = { report: value, outputs: (c.args[0] as { outputs: unknown }).outputs };
    if (c.fn === 'ports') {
      const ports = value as { inputs: PortSpec[]; outputs: PortSpec[] };
      value = {
        inputs: portsData(ports.inputs, c.args[0] as Record<string, unknown>),
        outputs: portsData(ports.outputs, c.args[0] as Record<string, unknown>),
      };
    }
    // Only plain data crosses threads: a value that cannot be cloned is the package's mistake.
    structuredClone(value);
    return { ok: value };
  } catch (e) {
    return { error: e instanceof DOMException && e.name === 'DataCloneError' ? 'returns a value that is not plain data (functions, classes)' : messageOf(e) };
  } finally {
    now.stop();
  }
}

parentPort!.on(
  'message',
  async (
    m:
      | { id: number; type: 'load'; names: string[] }
      | { id: number; type: 'call'; call: PackageCall; sync?: boolean }
      | { id: number; type: 'describe'; items: { kernel: string; params: Record<string, unknown> }[] },
  ) => {
    if (m.type === 'load') {
      const loaded = await importKernelPackages(m.names, process.cwd(), (what) => (what ? now.start(what) : now.stop()));
      parentPort!.postMessage({ id: m.id, loaded });
    } else if (m.type === 'call') {
      const result = call(m.call);
      if (m.sync) {
        reply.postMessage({ id: m.id, result });
        Atomics.store(flag, 0, 1);
        Atomics.notify(flag, 0);
      } else parentPort!.postMessage({ id: m.id, result });
    } else {
      // Everything a deploy's checks read of these kernels at these params, as memo entries.
      const entries: [string, CallResult][] = [];
      for (const item of m.items) {
        const k = findKernel(item.kernel);
        if (!k) continue;
        for (const c of describeCalls(k, item.params as never)) entries.push([callKey(c), call(c)]);
      }
      parentPort!.postMessage({ id: m.id, entries });
    }
  },
);
parentPort!.postMessage({ ready: true });
