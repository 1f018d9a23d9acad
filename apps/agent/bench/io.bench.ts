// bench:io — io.read and io.write against plain fs on the same files, in the same run.
// Each case runs the agent's data host (src/io/host.ts) as a PE thread's firing does, into
// (or from) a port's memory of the frame's size, beside the plain fs call a program would use
// for the same bytes: readSync into a buffer of that size, writeFileSync. Median of --repeat
// rounds, alternating the two so the page cache and the disk treat both alike. Target: io / fs
// at least 0.90 for 16 MiB frames (raw and .npy: the bytes go straight into the port; PNG pays
// its decoder and encoder, which plain fs does not: shown for what it costs).
//   npm run bench:io -- [--mib 16] [--frames 8] [--repeat 11]
// Then the multi-CPU half (P -> I -> C chains on one agent with --cpus 1..4 against one CPU PE,
// cpus.bench.ts's benchCpus), after this table.
import { mkdtempSync, openSync, closeSync, readSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir, cpus, hostname } from 'node:os';
import { join } from 'node:path';
import { findKernel, IO_READ, IO_WRITE, portsFor, withDefaults, type Params } from '@pipeloom/kernels';
import { AgentDataHost } from '../src/io/host.js';
import { encode } from '../src/io/formats.js';
import { arg, median, table } from './common.js';

const mib = arg('mib', 16);
const repeat = arg('repeat', 11);
/** Firings (or fs calls) per timed sample: enough bytes that the clock and the scheduler's noise do not decide. */
const frames = arg('frames', 8);
const bytes = mib << 20;
const dir = mkdtempSync(join(tmpdir(), 'pipeloom-bench-io-'));
const host = new AgentDataHost([{ name: 'b', dir }]);
const now = () => performance.now() / 1000;

/** A port's memory for a node's params (as the runtime allocates it). */
function port(kernel: string, params: Params, side: 'inputs' | 'outputs'): ArrayBufferView {
  const spec = findKernel(kernel)!;
  const p = withDefaults(spec, params);
  const t = portsFor(spec, p)[side][0].type(p);
  const n = t.shape.reduce((a, b) => a * b, 1);
  return t.element === 'u8' ? new Uint8Array(n) : new Float32Array(n);
}

interface Case {
  name: string;
  io: () => void;
  fs: () => void;
  /** Writes: the same bytes written whole as io.write writes them (a temporary file, then renamed), in plain fs. */
  atomic?: () => void;
}

const f32 = Float32Array.from({ length: bytes / 4 }, (_, i) => (i % 4093) / 4093);
const u8 = Uint8Array.from({ length: bytes }, (_, i) => (i * 7) % 251);
const side = Math.round(Math.sqrt(bytes));
const shape1 = String(bytes / 4);
writeFileSync(join(dir, 'in.raw'), f32);
writeFileSync(join(dir, 'in.npy'), Buffer.concat(encode('npy', f32, 'f32', [bytes / 4])));
writeFileSync(join(dir, 'in.png'), Buffer.concat(encode('png', u8.subarray(0, side * side), 'u8', [side, side])));

function fsRead(file: string, size: number): () => void {
  const into = Buffer.alloc(size);
  return () => {
    const fd = openSync(join(dir, file), 'r');
    let at = 0;
    while (at < size) {
      const got = readSync(fd, into, at, size - at, at);
      if (!got) break;
      at += got;
    }
    closeSync(fd);
  };
}

/** A program's plain write of the same parts: open, write each, close (with `atomic`: to a temporary file, renamed over the name). */
function fsWrite(file: string, parts: Uint8Array[], atomic = false): () => void {
  return () => {
    const to = join(dir, atomic ? `.${file}.tmp` : file);
    const fd = openSync(to, 'w');
    for (const x of parts) writeSync(fd, x);
    closeSync(fd);
    if (atomic) renameSync(to, join(dir, file));
  };
}

function ioRead(params: Params): () => void {
  const spec = findKernel(IO_READ)!;
  const p = withDefaults(spec, params);
  const out = port(IO_READ, params, 'outputs');
  const state = {};
  return () => host.read({ params: p, iteration: 0, inputs: {}, outputs: { out }, state });
}

function ioWrite(params: Params, data: ArrayBufferView): () => void {
  const spec = findKernel(IO_WRITE)!;
  const p = withDefaults(spec, params);
  const state = {};
  let k = 0;
  return () => void host.write({ params: p, iteration: k++, inputs: { in: data }, outputs: {}, state });
}

const npyHeader = 128;
const cases: Case[] = [
  { name: `read raw f32 (${mib} MiB)`, io: ioRead({ path: 'b:in.raw', dtype: 'f32', shape: shape1 }), fs: fsRead('in.raw', bytes) },
  { name: `read .npy f32 (${mib} MiB)`, io: ioRead({ path: 'b:in.npy', dtype: 'f32', shape: shape1 }), fs: fsRead('in.npy', bytes + npyHeader) },
  { name: `read PNG u8 ${side}x${side} (decode)`, io: ioRead({ path: 'b:in.png', dtype: 'u8', shape: `${side}x${side}` }), fs: fsRead('in.png', 0) },
  {
    name: `write .npy f32 (${mib} MiB)`,
    io: ioWrite({ path: 'b:out.npy', when: 'last', dtype: 'f32', shape: shape1 }, f32),
    fs: fsWrite('plain.npy', encode('npy', f32, 'f32', [bytes / 4])),
    atomic: fsWrite('atomic.npy', encode('npy', f32, 'f32', [bytes / 4]), true),
  },
  {
    name: `write raw f32 (${mib} MiB)`,
    io: ioWrite({ path: 'b:out.raw', format: 'raw', when: 'last', dtype: 'f32', shape: shape1 }, f32),
    fs: fsWrite('plain.raw', [new Uint8Array(f32.buffer)]),
    atomic: fsWrite('atomic.raw', [new Uint8Array(f32.buffer)], true),
  },
  {
    name: `write PNG u8 ${side}x${side} (encode)`,
    io: ioWrite({ path: 'b:out.png', when: 'last', dtype: 'u8', shape: `${side}x${side}` }, u8.subarray(0, side * side)),
    fs: () => writeFileSync(join(dir, 'plain.png'), u8.subarray(0, side * side)),
  },
];
// The PNG read's fs baseline reads the PNG file's own bytes.
cases[2].fs = fsRead('in.png', Buffer.byteLength(Buffer.concat(encode('png', u8.subarray(0, side * side), 'u8', [side, side]))));

const rows: string[][] = [];
for (const c of cases) {
  const io: number[] = [];
  const fs: number[] = [];
  const atomic: number[] = [];
  const order: [() => void, number[]][] = [
    [c.io, io],
    [c.fs, fs],
  ];
  if (c.atomic) order.push([c.atomic, atomic]);
  for (const [f] of order) f();
  for (let r = 0; r < repeat; r++) {
    // Each first in turn: the one after pays for the other's dirty pages no more often.
    for (const [f, into] of [...order.slice(r % order.length), ...order.slice(0, r % order.length)]) {
      const t = now();
      for (let k = 0; k < frames; k++) f();
      into.push((now() - t) / frames);
    }
  }
  const mbs = (s: number) => (bytes / (1 << 20) / s).toFixed(0);
  const [a, b] = [median(io), median(fs)];
  rows.push([
    c.name,
    `${(a * 1000).toFixed(1)}`,
    mbs(a),
    `${(b * 1000).toFixed(1)}`,
    mbs(b),
    (b / a).toFixed(2),
    c.atomic ? (median(atomic) / a).toFixed(2) : '',
  ]);
}
rmSync(dir, { recursive: true, force: true });
console.log(
  `bench:io on ${hostname()} (${cpus()[0]?.model ?? 'cpu'}, ${cpus().length} cores), ${tmpdir()}, ${mib} MiB frames, median of ${repeat} samples of ${frames} frames`,
);
console.log(table(['case', 'io ms', 'io MiB/s', 'fs ms', 'fs MiB/s', 'io/fs', 'io/fs whole'], rows));
console.log('io/fs: against plain fs (overwrite in place); io/fs whole: against fs writing the same file whole (temporary file, rename), as io.write does');

// The multi-CPU half: P -> I -> C chains on one agent with --cpus 1..4 against one CPU PE.
const { benchCpus, cpusTable } = await import('./cpus.bench.js');
const opts = { cpus: [1, 2, 3, 4], size: 16, angles: 36, iterations: 8, rounds: 3, sync: 'self-timed' as const };
console.log(`\nbench:io, multi-CPU half: one agent with --cpus 1..4, self-timed, median of ${opts.rounds} rounds; this machine: ${cpus().length} cores`);
console.log(cpusTable(await benchCpus(opts)));
process.exit(0);
