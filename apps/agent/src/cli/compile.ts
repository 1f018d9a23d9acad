import { allPrograms, bufferNodes, compile, formatBytes, type ImplementationGraph, type MemoryReport, type ProjectDocument } from '@pipeloom/core';
import { choice, parseCommandArgs } from './args.js';
import { diagnosticsJson, EXIT, printDiagnostics, readDocument } from './read-document.js';
import { loadKernelsFlag, loadTimeoutFlag, withPackageCalls } from '../kernels/load.js';
import { kernelsHelp, loadTimeoutHelp, paramHelp } from './option-help.js';

const USAGE = `usage: pipeloom compile FILE [--overlap|--no-overlap] [--format text|json|dot] [--param NAME=VALUE ...]

Compiles a project document into its implementation graph (paper section 4.2) and prints
each node with (schedule, latency), each buffer bn_k with its PE, depth, colour and size, and
per-PE memory before and after sharing with its lower bound.

  --overlap, --no-overlap   strategy (default: the document's options.overlap)
  --format text|json|dot    text (default), JSON, or Graphviz of the implementation graph;
                            with json, a bad document prints {"ok": false, "diagnostics": [...]}
                            (each with severity, path, message, hint) on stdout too
${paramHelp(28)}
  --data [NAME=]DIR        read the shape and dtype io.read nodes leave out from their files'
                           headers, NAME:path naming a file under DIR (repeatable)
${kernelsHelp(28, ' before reading the document')}
${loadTimeoutHelp(28, '', ': a package past it is named, and the command exits 2')}

Exit status: 0 compiled, 1 failure (unreadable file, bad option), 2 invalid document or kernel package.`;

export async function main(argv: string[]): Promise<number> {
  const args = parseCommandArgs(
    'compile',
    argv,
    {
      overlap: { type: 'boolean' },
      'no-overlap': { type: 'boolean' },
      format: { type: 'string' },
      kernels: { type: 'string', multiple: true },
      'kernel-load-timeout': { type: 'string' },
      param: { type: 'string', multiple: true },
      data: { type: 'string', multiple: true },
    },
    USAGE,
  );
  if (!args.ok) return args.code;
  const format = choice('compile', 'format', args.values.format, ['text', 'json', 'dot'] as const, 'text');
  if (!format) return EXIT.failure;
  if (args.values.overlap && args.values['no-overlap']) {
    console.error('pipeloom compile: choose one of --overlap and --no-overlap');
    return EXIT.failure;
  }
  if (args.positionals.length > 1) {
    console.error(`pipeloom compile: one document at a time, got ${args.positionals.length}\n\n${USAGE}`);
    return EXIT.failure;
  }
  const loadTimeout = loadTimeoutFlag('compile', args.values['kernel-load-timeout']);
  if (loadTimeout === undefined) return EXIT.failure;
  if (!(await loadKernelsFlag('compile', args.values.kernels as unknown as string[] | undefined, loadTimeout))) return EXIT.invalid;
  const read = await readDocument('compile', args.positionals[0], args.values.param, args.values.data);
  if (!read.ok) {
    // A bad document, as JSON too for a program reading stdout (an unreadable file has no diagnostics).
    if (format === 'json' && read.diagnostics) process.stdout.write(`${diagnosticsJson(read.diagnostics)}\n`);
    return read.code;
  }
  const overlap = args.values.overlap ? true : args.values['no-overlap'] ? false : undefined;
  const result = withPackageCalls('compile', () => compile(read.doc, { overlap }));
  if (!result) return EXIT.invalid;
  if (!result.ok) {
    printDiagnostics(result.diagnostics);
    if (format === 'json') process.stdout.write(`${diagnosticsJson(result.diagnostics)}\n`);
    return EXIT.invalid;
  }
  printDiagnostics(result.diagnostics);
  const out =
    format === 'json' ? JSON.stringify(toJson(read.doc, result.ig), null, 2) : format === 'dot' ? toDot(read.doc, result.ig) : toText(read.doc, result.ig);
  process.stdout.write(`${out}\n`);
  return EXIT.ok;
}

export function toJson(doc: ProjectDocument, ig: ImplementationGraph) {
  return {
    name: doc.name,
    overlap: ig.overlap,
    phases: ig.phases,
    schedule: ig.schedule,
    latency: ig.latency,
    fillCycles: ig.fillCycles,
    buffers: bufferNodes(ig).map((b) => ({
      id: b.id,
      pe: b.pe,
      source: b.source,
      port: b.port,
      from: 'node' in b.from ? b.from.node : b.from.buffer,
      consumers: b.consumers.map((c) => `${c.node}.${c.port}`),
      next: b.next,
      depth: b.depth,
      bytes: b.bytes,
      color: b.color,
    })),
    memory: Object.fromEntries(
      Object.entries(ig.memory).map(([pe, m]) => [pe, { before: m.before, after: m.after, lowerBound: m.lowerBound, capacity: m.capacity, ...joins(m) }]),
    ),
    programs: allPrograms(ig),
  };
}

/** A PE's join counts (views laid out, inputs gathered), where it has joins. */
const joins = (m: MemoryReport) => (m.views || m.gathers ? { views: m.views, gathers: m.gathers, gatherBytes: m.gatherBytes } : {});

const depthName = (d: number) => (d === 1 ? 'single' : d === 2 ? 'double' : `${d} slots`);

export function toText(doc: ProjectDocument, ig: ImplementationGraph): string {
  const lines: string[] = [];
  lines.push(`${doc.name || 'untitled'}: ${ig.overlap ? 'with' : 'without'} computation-communication overlap`);
  lines.push(`phases per cycle: ${ig.phases.join(', ')}; fill: ${ig.fillCycles} cycles`);
  lines.push('', 'nodes (schedule, latency):');
  const nodeWidth = Math.max(...ig.order.map((n) => n.length), 4);
  const peOf = new Map<string, string>();
  for (const p of Object.values(allPrograms(ig))) for (const ph of p.phases) for (const a of ph.actions) if (a.op === 'fire') peOf.set(a.node, p.pe);
  for (const n of ig.order) lines.push(`  ${`${n} (${ig.schedule[n]}, ${ig.latency[n]})`.padEnd(nodeWidth + 12)} on ${peOf.get(n)}`);
  lines.push('', 'buffers:');
  const buffers = bufferNodes(ig);
  const peWidth = Math.max(...buffers.map((b) => b.pe.length), 2);
  const idWidth = Math.max(...buffers.map((b) => b.id.length), 4);
  for (const [k, b] of buffers.entries()) {
    const view = ig.buffers.view[k] >= 0 ? `, in ${ig.buffers.id[ig.buffers.view[k]]}'s storage at byte ${ig.buffers.viewOffset[k]}` : '';
    const from =
      ('node' in b.from
        ? `written by ${b.from.node}`
        : `copied from ${b.from.buffer}${ig.buffers.parentOffset[k] ? ` (its bytes from ${ig.buffers.parentOffset[k]})` : ''}`) + view;
    // Delays: the initial tokens filled before the run, read first by a delayed edge's consumer.
    const initial = ig.buffers.initial[k] ? `, ${ig.buffers.initial[k]} initial iteration${ig.buffers.initial[k] === 1 ? '' : 's'}` : '';
    const to = [...b.next.map((x) => `-> ${x}`), ...b.consumers.map((c) => `read by ${c.node}.${c.port}`)].join(', ') + initial;
    lines.push(
      `  ${b.id.padEnd(idWidth)}  ${b.pe.padEnd(peWidth)}  ${`${b.source}.${b.port}`.padEnd(nodeWidth + 4)}  ${depthName(b.depth).padEnd(8)}  colour ${String(b.color).padEnd(3)} ${formatBytes(b.bytes).padStart(9)}  ${from}${to ? `; ${to}` : ''}`,
    );
  }
  lines.push('', 'memory per PE (before / after sharing / lower bound, of capacity):');
  for (const [pe, m] of Object.entries(ig.memory)) {
    if (m.before === 0) continue;
    const j =
      m.views || m.gathers ? `; ${m.views} views, ${m.gathers} gathers${m.gathers ? ` (${formatBytes(m.gatherBytes ?? 0)} copied per cycle)` : ''}` : '';
    lines.push(`  ${pe.padEnd(peWidth)}  ${formatBytes(m.before)} / ${formatBytes(m.after)} / ${formatBytes(m.lowerBound)}  of ${formatBytes(m.capacity)}${j}`);
  }
  return lines.join('\n');
}

/** Graphviz of the implementation graph: one cluster per PE, computation nodes as boxes. */
export function toDot(doc: ProjectDocument, ig: ImplementationGraph): string {
  // DOT strings: quotes escaped; `\n` in a label is Graphviz's line break.
  const q = (s: string) => `"${s.replace(/\\(?!n)/g, '\\\\').replace(/"/g, '\\"')}"`;
  const lines = [`digraph ${q(doc.name || 'pipeloom')} {`, '  rankdir=LR;', '  node [fontname="Helvetica", fontsize=10];'];
  const all = bufferNodes(ig);
  // Each PE's buffers, grouped once (a filter per PE was PEs x buffers).
  const onPe = new Map<string, typeof all>();
  for (const b of all) {
    const list = onPe.get(b.pe);
    if (list) list.push(b);
    else onPe.set(b.pe, [b]);
  }
  Object.values(allPrograms(ig)).forEach((p, i) => {
    const nodes = p.phases.flatMap((ph) => ph.actions).filter((a) => a.op === 'fire');
    const buffers = onPe.get(p.pe) ?? [];
    if (!nodes.length && !buffers.length) return;
    lines.push(`  subgraph cluster_${i} {`, `    label=${q(p.pe)};`, '    style=rounded;');
    for (const a of nodes)
      if (a.op === 'fire') lines.push(`    ${q(`node:${a.node}`)} [shape=box, label=${q(`${a.node} (${ig.schedule[a.node]}, ${ig.latency[a.node]})`)}];`);
    for (const b of buffers)
      lines.push(
        `    ${q(`buf:${b.id}`)} [shape=${b.depth > 1 ? 'doublecircle' : 'ellipse'}, label=${q(`${b.id}\\n${formatBytes(b.bytes)} colour ${b.color}`)}];`,
      );
    lines.push('  }');
  });
  for (const b of all) {
    if ('node' in b.from) lines.push(`  ${q(`node:${b.from.node}`)} -> ${q(`buf:${b.id}`)};`);
    for (const n of b.next) lines.push(`  ${q(`buf:${b.id}`)} -> ${q(`buf:${n}`)} [style=bold];`);
    for (const c of b.consumers) lines.push(`  ${q(`buf:${b.id}`)} -> ${q(`node:${c.node}`)} [label=${q(c.port)}];`);
  }
  lines.push('}');
  return lines.join('\n');
}
