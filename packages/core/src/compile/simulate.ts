import type { BufferId, PeId } from '../ids.js';
import { allPrograms, bufferNodes } from './decode.js';
import type { Action, BufferAccess, ImplementationGraph } from './types.js';

// A cycle-by-cycle model of what agents do with the programs: which iteration of which
// source each storage slot holds. Buffers of one memory colour share storage, so a wrong
// colouring shows up as a wrong read. It proves the latency pass, the phase order, the slot
// lags and the colouring together (property-tested over random graphs in simulate.test.ts).

export interface SimulationResult {
  /** Empty when every read saw exactly the iteration it should. */
  violations: string[];
  /** Firings per node. */
  fires: Record<string, number>;
  cycles: number;
}

interface Content {
  source: string;
  iteration: number;
}

type Thread = { name: string; actions: Action[] };

/**
 * Runs `iterations` iterations of the programs. Within a phase every transfer is its own
 * thread and each PE's firings one thread in order; a thread sees the state at the phase's
 * start plus its own writes. A slot written by one thread and touched by another in the same
 * phase is a race, reported as a violation.
 */
export function simulate(ig: ImplementationGraph, iterations: number, maxViolations = 20): SimulationResult {
  const buffer = new Map(bufferNodes(ig).map((b) => [b.id, b]));
  const programs = Object.values(allPrograms(ig));
  const storage = new Map<BufferId, { pe: PeId; color: number; depth: number }>();
  for (const p of programs) {
    for (const a of p.allocations) for (const b of a.buffers) storage.set(b, { pe: p.pe, color: a.color, depth: a.depth });
  }
  const state = new Map<string, Content>();
  const violations: string[] = [];
  const fires: Record<string, number> = Object.create(null);
  const report = (m: string) => {
    if (violations.length < maxViolations) violations.push(m);
  };
  const slotKey = (k: number, access: BufferAccess) => {
    const s = storage.get(access.buffer)!;
    if (s.depth < (buffer.get(access.buffer)!.depth)) report(`${access.buffer} has ${buffer.get(access.buffer)!.depth} slots but its storage ${s.depth}`);
    return `${s.pe}/${s.color}/${(((k - access.lag) % s.depth) + s.depth) % s.depth}`;
  };

  let last = 0;
  for (const p of programs) for (const ph of p.phases) for (const a of ph.actions) if (a.op !== 'barrier') last = Math.max(last, a.startCycle);
  const cycles = last + iterations;

  for (let k = 0; k < cycles; k++) {
    for (let ph = 0; ph < ig.phases.length; ph++) {
      const threads: Thread[] = [];
      for (const p of programs) {
        const fireThread: Thread = { name: `${p.pe} firings`, actions: [] };
        for (const a of p.phases[ph].actions) {
          if (a.op === 'transfer' && a.fromPe === p.pe) threads.push({ name: `transfer ${a.from.buffer}->${a.to.buffer}`, actions: [a] });
          else if (a.op === 'fire') fireThread.actions.push(a);
        }
        if (fireThread.actions.length) threads.push(fireThread);
      }
      const writes = new Map<string, { thread: string; content: Content }>();
      const reads = new Map<string, Set<string>>();
      for (const t of threads) {
        const own = new Map<string, Content>();
        const read = (key: string) => {
          (reads.get(key) ?? reads.set(key, new Set()).get(key)!).add(t.name);
          return own.get(key) ?? state.get(key);
        };
        const write = (key: string, content: Content) => {
          const other = writes.get(key);
          if (other && other.thread !== t.name) report(`cycle ${k}, phase ${ig.phases[ph]}: ${t.name} and ${other.thread} both write slot ${key}`);
          own.set(key, content);
          writes.set(key, { thread: t.name, content });
        };
        for (const a of t.actions) {
          if (a.op === 'barrier') continue;
          const it = k - a.startCycle;
          if (it < 0 || it >= iterations) continue;
          if (a.op === 'transfer') {
            const src = buffer.get(a.from.buffer)!;
            const got = read(slotKey(k, a.from));
            const want = `${src.source}.${src.port}`;
            if (!got || got.source !== want || got.iteration !== it) {
              report(`cycle ${k}, phase ${ig.phases[ph]}: transfer ${a.from.buffer}->${a.to.buffer} reads ${describe(got)}, expected ${want} iteration ${it}`);
            }
            write(slotKey(k, a.to), got ?? { source: '?', iteration: -1 });
          } else {
            fires[a.node] = (fires[a.node] ?? 0) + 1;
            for (const [port, access] of Object.entries(a.inputs)) {
              const src = buffer.get(access.buffer)!;
              const got = read(slotKey(k, access));
              const want = `${src.source}.${src.port}`;
              if (!got || got.source !== want || got.iteration !== it) {
                report(`cycle ${k}, phase ${ig.phases[ph]}: ${a.node}.${port} reads ${describe(got)} from ${access.buffer}, expected ${want} iteration ${it}`);
              }
            }
            for (const [port, access] of Object.entries(a.outputs)) write(slotKey(k, access), { source: `${a.node}.${port}`, iteration: it });
          }
        }
      }
      for (const [key, w] of writes) {
        for (const r of reads.get(key) ?? []) {
          if (r !== w.thread) report(`cycle ${k}, phase ${ig.phases[ph]}: ${r} reads slot ${key} while ${w.thread} writes it`);
        }
        state.set(key, w.content);
      }
    }
  }
  return { violations, fires, cycles };
}

function describe(c: Content | undefined): string {
  return c ? `${c.source} iteration ${c.iteration}` : 'an empty slot (a transient)';
}
