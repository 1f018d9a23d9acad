import { type Access, type TraceEvent, waitSlice } from '@pipeloom/core';
import { align4, depthOf, gpuRange, hostBytes, slotOf, type GpuSlots, type HostSlots } from './memory.js';
import { AbortError } from './abort.js';
import { Counters } from './counters.js';
import { GpuBatch } from './gpu-batch.js';
import { nowUs } from './pe-lifecycle.js';
import type { PeState } from './pe-state.js';
import type { Fire, KernelReport, Transfer } from './pe-types.js';
import { checkReport, fire } from './pe-fire.js';
import { stagedHalf, transfer } from './pe-transfer.js';

// Self-timed execution on a static run's PE thread (pe-worker.ts; core run/contract.ts,
// counters.ts): no barrier, each action runs as soon as the counters let it.

/** Self-timed: a stream that never has to wait lets its thread's event loop in at least this often (ms). */
const YIELD_MS = 10;

/**
 * Self-timed execution: the PE's firings are one stream in program order; each transfer it
 * drives is a stream of its own (PREESM's one loop per actor and per communication), so a copy
 * runs ahead of the firings, and they of it, until a counter stops it. Every wait is cut short
 * by the run's abort.
 */
export async function streams(s: PeState): Promise<void> {
  const { plan, counters: memory } = s.init.selfTimed!;
  const planned = (p: number, j: number): Access => {
    const access = plan[p]?.[j]?.access;
    if (!access) throw new Error(`${s.pe}: the self-timed plan has no access for action ${j} of phase ${p}`);
    return access;
  };
  const reached: number[] = (s.reached = []);
  const batched = batchable(s);
  if (batched) {
    reached.push(0);
    const counters = new Counters(memory, s.init.iterations, s.aborts);
    return s.guard(
      batchStream(
        s,
        batched.map(([p, j, a]) => ({ a, access: planned(p, j) })),
        counters,
      ),
    );
  }
  const fires: { a: Fire; access: Access }[] = [];
  const transfers: { t: Transfer; access: Access }[] = [];
  s.init.program.phases.forEach((phase, p) =>
    phase.actions.forEach((a, j) => {
      if (a.op === 'fire') fires.push({ a, access: planned(p, j) });
      else if (a.op === 'transfer' && (s.staged.has(a) || s.drives(a))) transfers.push({ t: a, access: planned(p, j) });
    }),
  );
  const counters = new Counters(memory, s.init.iterations, s.aborts);
  const all = transfers.map(({ t, access }) => transferStream(s, t, access, counters, reached.push(0) - 1));
  if (fires.length) all.push(fireStream(s, fires, counters, reached.push(0) - 1));
  await s.guard(Promise.all(all));
}

/**
 * This GPU PE's actions in program order (phase by phase: an order every cycle's dependencies
 * respect), when each cycle of them can be one queue submission (gpu-batch.ts): real kernels
 * only (no CPU twin, no padded device time), copies between host and this GPU only, links
 * not emulated. Else undefined: one stream per action, as on a CPU PE.
 */
function batchable(s: PeState): [number, number, Fire | Transfer][] | undefined {
  if (s.init.program.kind !== 'gpu' || s.init.emulateLinks || s.staged.size) return undefined;
  const emulated = s.init.emulateDevices ?? {};
  const list: [number, number, Fire | Transfer][] = [];
  for (const [p, phase] of s.init.program.phases.entries()) {
    for (const [j, a] of phase.actions.entries()) {
      if (a.op === 'fire') {
        if (!s.fires.get(a)?.gpu || emulated[a.node]) return undefined;
        list.push([p, j, a]);
      } else if (a.op === 'transfer' && s.drives(a)) {
        const src = s.slots(a.from.buffer).kind;
        if (src === s.slots(a.to.buffer).kind) return undefined;
        list.push([p, j, a]);
      }
    }
  }
  return list;
}

/**
 * Self-timed on a GPU PE: each cycle's uploads, firings and read-backs go to the queue as one
 * batch with one wait (gpu-batch.ts), instead of a wait per action. A wait on another thread
 * first completes the batch, so no thread ever waits on work this one holds back. Each
 * action's trace slice runs from its encoding to the batch's completion: the queue does not
 * say when each part ended.
 */
async function batchStream(s: PeState, actions: { a: Fire | Transfer; access: Access }[], counters: Counters): Promise<void> {
  const { iterations, cycles, host } = s.init;
  const fault = s.fault;
  const batch = new GpuBatch(s.device!, counters, iterations);
  const slices: TraceEvent[] = [];
  const reports: { a: Fire; report: () => Promise<KernelReport | void>; it: number }[] = [];
  let stamped = false;
  const complete = async () => {
    let end = 0;
    await batch.complete(
      (p) => s.gpu(p),
      () => (end = nowUs()),
    );
    if (stamped) s.life.stamp.end();
    stamped = false;
    for (const e of slices) s.trace({ ...e, end });
    slices.length = 0;
    for (const r of reports) checkReport(s, r.a, r.it, await s.gpu(r.report()));
    reports.length = 0;
  };
  let yielded = performance.now();
  for (let k = 0; k < cycles; k++) {
    for (const { a, access } of actions) {
      const i = k - a.startCycle;
      if (i < 0 || i >= iterations) continue;
      if (batch.blocked(access, i) >= 0) {
        if (batch.open) await complete();
        if (counters.blocked(access, i) >= 0) await waitFor(s, a, access, counters, i, k, a.op === 'fire' ? 'main' : s.laneOf(a));
      }
      const start = nowUs();
      if (a.op === 'fire') {
        const f = s.fires.get(a)!;
        const { firing, after } = s.copies.gpuFiring(a, s.pick(a.inputs, k), s.pick(a.outputs, k), s.gathers(a, k), i, batch.commands);
        if (!stamped) s.life.stamp.begin(s.fireIndex.get(a)!, i);
        stamped = true;
        f.gpu!.encode(batch.commands, firing);
        after(batch.commands);
        const report = f.gpu!.report;
        if (report) reports.push({ a, it: i, report: () => report.call(f.gpu, firing) });
        slices.push({ host, pe: s.pe, thread: 'main', kind: 'fire', name: a.node, node: a.node, iteration: i, cycle: k, start, end: start });
      } else {
        const src = s.slots(a.from.buffer);
        const dst = s.slots(a.to.buffer);
        const sSlot = slotOf(k, a.from.lag, depthOf(src));
        const dSlot = slotOf(k, a.to.lag, depthOf(dst));
        const size = align4(a.bytes);
        // Only the transfer's range moves (a split's part), into the destination's place (a view).
        if (src.kind === 'cpu')
          batch.write(
            (dst as GpuSlots).buffers[dSlot],
            s.copies.scratchFor(a.to.buffer, hostBytes(src, sSlot, a.from)),
            size,
            gpuRange(dst as GpuSlots, a.to).offset,
          );
        else {
          const into = hostBytes(dst as HostSlots, dSlot, a.to);
          batch.read(
            src.buffers[sSlot],
            s.copies.stagingFor(`read ${a.to.buffer}`, align4(into.byteLength), GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST),
            align4(into.byteLength),
            into,
            gpuRange(src, a.from).offset,
          );
        }
        slices.push({
          host,
          pe: s.pe,
          thread: s.laneOf(a),
          kind: 'transfer',
          name: a.to.buffer,
          buffer: a.to.buffer,
          from: a.from.buffer,
          iteration: i,
          cycle: k,
          start,
          end: start,
          bytes: a.bytes,
        });
      }
      batch.signal(access, i);
    }
    if (batch.open) await complete();
    s.reached![0] = k + 1;
    s.injectFault(k, fault);
    yielded = await yieldSometimes(s, yielded);
  }
}

async function fireStream(s: PeState, fires: { a: Fire; access: Access }[], counters: Counters, n: number): Promise<void> {
  const { iterations, cycles } = s.init;
  const fault = s.fault;
  let yielded = performance.now();
  for (let k = 0; k < cycles; k++) {
    for (const { a, access } of fires) {
      const i = k - a.startCycle;
      if (i < 0 || i >= iterations) continue;
      if (counters.blocked(access, i) >= 0) await waitFor(s, a, access, counters, i, k, 'main');
      await fire(s, a, k, i);
      counters.signal(access, i);
    }
    s.reached![n] = k + 1;
    s.injectFault(k, fault);
    yielded = await yieldSometimes(s, yielded);
  }
}

async function transferStream(s: PeState, t: Transfer, access: Access, counters: Counters, n: number): Promise<void> {
  const staged = s.staged.has(t);
  const sending = t.fromPe === s.pe;
  const lane = s.laneOf(t);
  let yielded = performance.now();
  for (let i = 0; i < s.init.iterations; i++) {
    const k = t.startCycle + i;
    if (staged && !sending) {
      // The source's half did the waits; the bytes' arrival is the staging flag (stagedHalf).
      await stagedHalf(s, t, k, i);
      counters.signal(access, i);
    } else {
      if (counters.blocked(access, i) >= 0) await waitFor(s, t, access, counters, i, k, lane);
      if (staged) {
        // One staging buffer per transfer: free once the destination has taken iteration i - 1.
        if (Atomics.load(counters.values, access.signal) < i) await counters.atLeast(access.signal, i);
        await stagedHalf(s, t, k, i);
      } else {
        await transfer(s, t, k, i);
        counters.signal(access, i);
      }
    }
    s.reached![n] = k + 1;
    yielded = await yieldSometimes(s, yielded);
  }
  s.reached![n] = s.init.cycles;
}

/**
 * A stream whose counters are all there never waits, and a CPU kernel never yields: let the
 * event loop in (abort, trace flushes) every few milliseconds. Throws once the run aborted.
 */
async function yieldSometimes(s: PeState, since: number): Promise<number> {
  if (s.aborted) throw new AbortError(s.aborted);
  const now = performance.now();
  if (now - since < YIELD_MS) return since;
  await new Promise<void>((r) => setImmediate(r));
  if (s.aborted) throw new AbortError(s.aborted);
  return performance.now();
}

/** Waits until `access` may run iteration i, traced as a wait on the buffer it waits for. */
async function waitFor(s: PeState, a: Fire | Transfer, access: Access, counters: Counters, i: number, k: number, thread: string): Promise<void> {
  const t0 = nowUs();
  // Another thread may have signalled since the caller looked.
  const j = counters.blocked(access, i);
  if (j < 0) return;
  await counters.until(access, i, j);
  s.trace({
    host: s.init.host,
    pe: s.pe,
    thread,
    kind: 'wait',
    name: waitSlice(waitedBuffer(s, a, access.waits[j].counter)),
    iteration: i,
    cycle: k,
    start: t0,
    end: nowUs(),
  });
}

/** The buffer a wait on `counter` is about: an input its writer fills, else (a free slot) the action's output. */
function waitedBuffer(s: PeState, a: Fire | Transfer, counter: number): string {
  const plan = s.init.selfTimed!.plan;
  const phases = s.init.program.phases;
  const inputs = a.op === 'fire' ? [...Object.values(a.inputs), ...Object.values(a.parts ?? {}).flat()].map((x) => x.buffer) : [a.from.buffer];
  for (let p = 0; p < phases.length; p++) {
    for (let j = 0; j < phases[p].actions.length; j++) {
      const e = plan[p]?.[j];
      if ((e?.access ?? e?.receive)?.signal !== counter) continue;
      const w = phases[p].actions[j];
      const wrote = w.op === 'fire' ? Object.values(w.outputs).map((x) => x.buffer) : w.op === 'transfer' ? [w.to.buffer] : [];
      const hit = inputs.find((b) => wrote.includes(b));
      if (hit) return hit;
    }
  }
  return a.op === 'fire' ? (Object.values(a.outputs)[0]?.buffer ?? a.node) : a.to.buffer;
}
