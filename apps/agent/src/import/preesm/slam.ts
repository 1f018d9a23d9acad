import type { ArchitectureGraph, Host, Link, ProcessingElement } from '@pipeloom/core';
import { attr, childNamed, childrenNamed, localName, type XmlElement } from '../xml.js';
import type { Issues } from './issues.js';

// PREESM's architectures (S-LAM, an IP-XACT design): component instances (operators,
// communication nodes, memories, DMAs) and their data links. The architecture graph made of
// them: the operators sharing a memory (a parallel communication node or a Mem component they
// reach directly) are one host, one CPU PE per operator (`cpu0@<host>` .., as an agent serving
// that many cores names them); the cores of a host are linked through their shared memory
// (`memory` links), hosts through the communication nodes between their memories.

export interface SlamComponent {
  instance: string;
  /** The component definition (`x86`): scenario timings name it. */
  definition: string;
  /** Operator, parallelComNode, contentionComNode, Mem, Dma (or '' when the design does not say). */
  type: string;
  /** A communication node's speed: bytes per time unit. */
  speed?: number;
  /** A memory's size in bytes. */
  size?: number;
  line: number;
}

export interface SlamLink {
  a: string;
  b: string;
  type: string;
  directed: boolean;
  name: string;
  line: number;
}

export interface Slam {
  name: string;
  components: SlamComponent[];
  links: SlamLink[];
}

/** Most operators one design may have: the links inside a host grow with the square of its cores. */
export const MAX_OPERATORS = 256;

export function readSlam(root: XmlElement): Slam {
  if (localName(root.name) !== 'design') throw new Error(`the root element is <${root.name}>, not <spirit:design> (is this a PREESM .slam file?)`);
  const ext = childNamed(root, 'vendorExtensions');
  const descriptions = new Map<string, XmlElement>();
  const linkInfo = new Map<string, XmlElement>();
  if (ext) {
    for (const d of childrenNamed(childNamed(ext, 'componentDescriptions') ?? ext, 'componentDescription')) descriptions.set(attr(d, 'componentRef') ?? '', d);
    for (const d of childrenNamed(childNamed(ext, 'linkDescriptions') ?? ext, 'linkDescription')) linkInfo.set(attr(d, 'referenceId') ?? '', d);
  }
  const num = (s: string | undefined) => (s === undefined || s.trim() === '' ? undefined : Number(s));
  const components = childrenNamed(childNamed(root, 'componentInstances') ?? root, 'componentInstance').map((c): SlamComponent => {
    const definition = attr(childNamed(c, 'componentRef') ?? c, 'name') ?? '';
    const d = descriptions.get(definition);
    return {
      instance: childNamed(c, 'instanceName')?.text.trim() ?? '',
      definition,
      type: (d && attr(d, 'componentType')) ?? '',
      speed: d ? num(attr(d, 'speed')) : undefined,
      size: d ? num(attr(d, 'size')) : undefined,
      line: c.line,
    };
  });
  const links = childrenNamed(childNamed(root, 'interconnections') ?? root, 'interconnection').map((x): SlamLink => {
    const ends = childrenNamed(x, 'activeInterface').map((a) => attr(a, 'componentRef') ?? '');
    const name = childNamed(x, 'name')?.text.trim() ?? '';
    const d = linkInfo.get(name);
    return {
      a: ends[0] ?? '',
      b: ends[1] ?? '',
      name,
      type: (d && attr(d, 'linkType')) ?? 'DataLink',
      directed: (d && attr(d, 'directedLink')) === 'directed',
      line: x.line,
    };
  });
  return { name: childNamed(root, 'name')?.text.trim() ?? '', components, links };
}

export interface ImportedArch {
  arch: ArchitectureGraph;
  /** Operator instance -> PE id. */
  peOf: Map<string, string>;
  /** Operator instance -> its component definition (scenario timings are per definition). */
  definitionOf: Map<string, string>;
  /** Operator instances in the design's order. */
  operators: string[];
}

/** Bytes a PE offers for buffers where no Mem component says (the document format's default for a CPU). */
const DEFAULT_MEMORY = 64 * 1024 ** 3;

/**
 * The architecture graph of a design. `timeUnit` is the seconds of one PREESM time unit: a PE
 * does one flop per time unit (so a timing of t units is t flops) and a communication node of
 * speed s moves s bytes per time unit.
 */
export function slamArchitecture(slam: Slam, timeUnit: number, file: string, issues: Issues): ImportedArch | undefined {
  const byName = new Map<string, SlamComponent>();
  for (const c of slam.components) {
    if (!c.instance) issues.error(file, c.line, 'component instance', 'has no instanceName', 'name every component instance');
    else if (byName.has(c.instance)) issues.error(file, c.line, `component ${c.instance}`, 'is declared twice', 'give every component instance its own name');
    else byName.set(c.instance, c);
    if (c.type === '')
      issues.warn(
        file,
        c.line,
        `component ${c.instance}`,
        `its definition "${c.definition}" has no componentDescription, so its type is unknown: it is taken as a communication node`,
        'describe it in slam:componentDescriptions',
      );
  }
  const operators = slam.components.filter((c) => c.type === 'Operator').map((c) => c.instance);
  if (!operators.length) {
    issues.error(
      file,
      undefined,
      `design ${slam.name}`,
      'has no operator (no componentDescription of type Operator)',
      'an architecture needs at least one operator to run actors',
    );
    return undefined;
  }
  if (operators.length > MAX_OPERATORS) {
    issues.error(file, undefined, `design ${slam.name}`, `has ${operators.length} operators, more than ${MAX_OPERATORS}`, 'import a smaller design');
    return undefined;
  }
  // Data links as an undirected graph (Pipeloom's links carry data both ways).
  const next = new Map<string, string[]>();
  for (const l of slam.links) {
    if (l.type === 'ControlLink') continue;
    if (!byName.has(l.a) || !byName.has(l.b)) {
      issues.warn(file, l.line, `link ${l.name}`, `connects "${l.a}" and "${l.b}", which are not both component instances: it is left out`);
      continue;
    }
    if (l.directed) issues.warn(file, l.line, `link ${l.name}`, 'is directed; Pipeloom links carry data both ways, so it is imported undirected');
    for (const [x, y] of [
      [l.a, l.b],
      [l.b, l.a],
    ])
      next.set(x, [...(next.get(x) ?? []), y]);
  }
  for (const c of slam.components)
    if (c.type === 'Dma') issues.warn(file, c.line, `DMA ${c.instance}`, 'is not carried over: transfers are timed by the communication nodes alone');

  // Hosts: operators joined by a memory they reach directly.
  const isMemory = (c: SlamComponent) => c.type === 'parallelComNode' || c.type === 'Mem';
  const host = new Map<string, number>();
  const hostMemories: string[][] = [];
  const hostOps: string[][] = [];
  for (const op of operators) {
    if (host.has(op)) continue;
    const h = hostOps.length;
    hostOps.push([]);
    hostMemories.push([]);
    const todo = [op];
    host.set(op, h);
    while (todo.length) {
      const x = todo.pop()!;
      const cx = byName.get(x)!;
      if (cx.type === 'Operator') hostOps[h].push(x);
      else hostMemories[h].push(x);
      for (const y of next.get(x) ?? []) {
        const cy = byName.get(y)!;
        // From an operator to the memories it reaches; from a memory to its operators and to
        // memories attached to it (a Mem behind its parallel node).
        const joins = cx.type === 'Operator' ? isMemory(cy) : cy.type === 'Operator' || (isMemory(cy) && (cx.type === 'Mem' || cy.type === 'Mem'));
        if (joins && !host.has(y)) {
          host.set(y, h);
          todo.push(y);
        }
      }
    }
  }
  // Cores by name, numbers in order (Core2 before Core10, and before Core3 where the design
  // lists Core3 first), so that CoreK is cpuK@<host> where the design numbers them from 0.
  const byCoreName = new Intl.Collator('en', { numeric: true }).compare;
  for (const ops of hostOps) ops.sort(byCoreName);
  const hostIds = hostMemories.map((mems, h) => {
    const base = (mems.find((m) => byName.get(m)!.type === 'parallelComNode') ?? mems[0] ?? hostOps[h][0]).replace(/[^A-Za-z0-9_.-]/g, '_');
    return base;
  });
  // Unique host ids (two memories of one name cannot happen; an operator alone may share a name with a memory).
  const used = new Set<string>();
  hostIds.forEach((id, h) => {
    let u = id;
    for (let k = 2; used.has(u); k++) u = `${id}_${k}`;
    used.add(u);
    hostIds[h] = u;
  });

  // Per second from per time unit, without the float residue of the division (1 / 1e-9).
  const perSecond = (x: number) => Number((x / timeUnit).toPrecision(15));
  const speedOf = (name: string) => {
    const c = byName.get(name)!;
    return c.speed !== undefined && c.speed > 0 ? c.speed : undefined;
  };
  const pes: ProcessingElement[] = [];
  const peOf = new Map<string, string>();
  const definitionOf = new Map<string, string>();
  const links: Link[] = [];
  const hosts: Host[] = [];
  hostOps.forEach((ops, h) => {
    const mems = hostMemories[h].map((m) => byName.get(m)!);
    const memSize = mems.filter((m) => m.type === 'Mem' && m.size !== undefined && m.size > 0).reduce((a, m) => a + m.size!, 0);
    const memory = memSize || DEFAULT_MEMORY;
    // The host's cores share its memory: each may use all of it, their sum is checked (cpuMemory).
    hosts.push(ops.length > 1 ? { id: hostIds[h], cpuMemory: memory } : { id: hostIds[h] });
    // One operator is `cpu@<host>`, several `cpu0@<host>` ..: the PEs an agent on that host serves.
    ops.forEach((op, k) => {
      const id = ops.length === 1 ? `cpu@${hostIds[h]}` : `cpu${k}@${hostIds[h]}`;
      peOf.set(op, id);
      definitionOf.set(op, byName.get(op)!.definition);
      pes.push({ id, host: hostIds[h], kind: 'cpu', memory, flops: perSecond(1), memoryBandwidth: 1e15 });
    });
    const speeds = mems.map((m) => speedOf(m.instance)).filter((s): s is number => s !== undefined);
    const speed = speeds.length ? Math.min(...speeds) : undefined;
    if (ops.length > 1 && speed === undefined)
      issues.warn(
        file,
        mems[0]?.line,
        `memory ${hostMemories[h][0]}`,
        'has no speed: the cores sharing it are linked at 1 byte per time unit',
        'give its parallelComNode a slam:speed',
      );
    for (let i = 0; i < ops.length; i++) {
      for (let j = i + 1; j < ops.length; j++) {
        links.push({ a: peOf.get(ops[i])!, b: peOf.get(ops[j])!, kind: 'memory', bandwidth: perSecond(speed ?? 1), latency: 0, duplex: true });
      }
    }
  });
  // Hosts linked through the communication nodes between their memories (or an operator's own
  // contention node); the slowest node on the way bounds the link.
  const memberOf = (name: string) => host.get(name);
  for (let h = 0; h < hostOps.length; h++) {
    const starts = [...hostMemories[h], ...hostOps[h]];
    const best = new Map<number, number>();
    const seen = new Set(starts);
    const todo: { name: string; speed: number }[] = starts.map((name) => ({ name, speed: Infinity }));
    while (todo.length) {
      const { name, speed } = todo.pop()!;
      for (const y of next.get(name) ?? []) {
        if (seen.has(y)) continue;
        const other = memberOf(y);
        if (other !== undefined && other !== h) {
          const s = Math.min(speed, speedOf(y) ?? Infinity, speedOf(name) ?? Infinity);
          best.set(other, Math.max(best.get(other) ?? 0, s));
          continue;
        }
        if (other === h) continue;
        seen.add(y);
        todo.push({ name: y, speed: Math.min(speed, speedOf(y) ?? Infinity) });
      }
    }
    for (const [other, speed] of best) {
      if (other < h) continue;
      const s = Number.isFinite(speed) ? speed : 1;
      links.push({ a: peOf.get(hostOps[h][0])!, b: peOf.get(hostOps[other][0])!, kind: 'ethernet', bandwidth: perSecond(s), latency: 0, duplex: true });
    }
  }
  for (const op of operators) {
    if (!(next.get(op) ?? []).length && operators.length > 1)
      issues.warn(
        file,
        byName.get(op)!.line,
        `operator ${op}`,
        'is linked to nothing: no data can reach it, so actors mapped on it are alone',
        'link it to a communication node',
      );
  }
  return { arch: { hosts, pes, links }, peOf, definitionOf, operators };
}
