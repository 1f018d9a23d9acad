// Prefix networks over p inputs (Copik, section 3.3; figures 3.1-3.5), as DAGs of applications
// of a binary operator over index ranges [lo, hi]. A network is written as levels of in-place
// operations on positions 0..P-1 (P = p, or the next power of two for the tree networks, whose
// padded inputs are identities); every operation of a level reads the state before the level
// (double buffering, as Kogge-Stone needs). The identity is symbolic: an application with an
// identity operand yields the other one and fires nothing (it is recorded, flagged `free`, so
// the figures' counts with identities counted come out too). Operands keep their order: an
// application's left range ends where its right range starts (checked), so networks re-bracket
// and never swap.

export const NETWORKS = ['serial', 'kogge-stone', 'sklansky', 'brent-kung', 'blelloch'] as const;
export type ScanNetwork = (typeof NETWORKS)[number];
/** Other names a document may use for a network. */
export const NETWORK_ALIASES: Record<string, ScanNetwork> = { 'hillis-steele': 'kogge-stone' };
/** Short names in expanded node ids (`scan1/ks.r2.w5`). */
export const NETWORK_TAGS: Record<ScanNetwork, string> = { serial: 'ser', 'kogge-stone': 'ks', sklansky: 'sk', 'brent-kung': 'bk', blelloch: 'bl' };

/** The identity (an empty range): as an operand it fires nothing. */
export const IDENTITY = -1;

/** A value of the network: an input (a leaf) or the result of a fired application. */
export interface NetworkValue {
  lo: number;
  hi: number;
  /** The input index, for a leaf. */
  leaf?: number;
  /** The fired application computing it. */
  app?: number;
}

export interface Application {
  /** 1-based level (round) of the network. */
  level: number;
  /** The position whose slot receives the result. */
  position: number;
  /** The worker that runs it: the position, or the last worker for a padded position. */
  worker: number;
  /** Operand value indices (IDENTITY for the identity). */
  left: number;
  right: number;
  lo: number;
  hi: number;
  /** An operand is the identity: nothing fires. */
  free: boolean;
  /** For a fired one: the value it makes. */
  value?: number;
}

export interface Network {
  network: ScanNetwork;
  p: number;
  /** Positions, after padding. */
  positions: number;
  /** Levels the network has (with identities counted). */
  levels: number;
  values: NetworkValue[];
  /** Every application, free ones included, in level order. */
  applications: Application[];
  /** Value per worker of its inclusive prefix [0, i], where the network holds one; IDENTITY-free. */
  inclusive: (number | undefined)[];
  /** Value per worker of its exclusive prefix [0, i - 1] (IDENTITY for worker 0). */
  exclusive: number[];
  /** Whether the network's natural result is the exclusive scan (Blelloch). */
  exclusiveNetwork: boolean;
  /** Longest chain of applications when free ones take a step too. */
  depthCounted: number;
}

/** An operation of a level: `to` = `a` (+) `b`, or a move `to` = `a` (b undefined), or `to` = identity (a = IDENTITY). Positions read the state before the level. */
interface Op {
  to: number;
  a: number;
  b?: number;
}

/** Most inputs a network is built for (the expansion's PE lists are bounded far below). */
export const MAX_NETWORK_INPUTS = 1 << 16;

export function resolveNetwork(name: string): ScanNetwork | undefined {
  if ((NETWORKS as readonly string[]).includes(name)) return name as ScanNetwork;
  return Object.hasOwn(NETWORK_ALIASES, name) ? NETWORK_ALIASES[name] : undefined;
}

const log2ceil = (n: number) => (n <= 1 ? 0 : Math.ceil(Math.log2(n)));

/** The levels of a network on p inputs: its operations, and the positions (padding included). */
function levelsOf(network: ScanNetwork, p: number): { positions: number; levels: Op[][] } {
  const levels: Op[][] = [];
  switch (network) {
    case 'serial':
      for (let k = 1; k < p; k++) levels.push([{ to: k, a: k - 1, b: k }]);
      return { positions: p, levels };
    case 'kogge-stone':
      for (let d = 1; d < p; d *= 2) {
        const level: Op[] = [];
        for (let k = d; k < p; k++) level.push({ to: k, a: k - d, b: k });
        levels.push(level);
      }
      return { positions: p, levels };
    case 'sklansky':
      for (let t = 0; 1 << t < p; t++) {
        const level: Op[] = [];
        for (let k = 0; k < p; k++) if ((k >> t) & 1) level.push({ to: k, a: ((k >> (t + 1)) << (t + 1)) + (1 << t) - 1, b: k });
        levels.push(level);
      }
      return { positions: p, levels };
    case 'brent-kung': {
      const P = 1 << log2ceil(p);
      for (let d = 1; d < P; d *= 2) {
        const level: Op[] = [];
        for (let k = 2 * d - 1; k < P; k += 2 * d) level.push({ to: k, a: k - d, b: k });
        levels.push(level);
      }
      for (let d = P >> 2; d >= 1; d >>= 1) {
        const level: Op[] = [];
        for (let k = 3 * d - 1; k < P; k += 2 * d) level.push({ to: k, a: k - d, b: k });
        levels.push(level);
      }
      return { positions: P, levels };
    }
    case 'blelloch': {
      const P = 1 << log2ceil(p);
      for (let d = 1; d < P; d *= 2) {
        const level: Op[] = [];
        for (let k = 2 * d - 1; k < P; k += 2 * d) level.push({ to: k, a: k - d, b: k });
        levels.push(level);
      }
      // The down-sweep starts from the identity at the root; the left child takes its parent's
      // value, the right child combines its parent's with the left child's up-sweep value.
      for (let d = P >> 1; d >= 1; d >>= 1) {
        const level: Op[] = [];
        for (let k = 2 * d - 1; k < P; k += 2 * d) level.push({ to: k - d, a: k }, { to: k, a: k, b: k - d });
        levels.push(level);
      }
      return { positions: P, levels };
    }
  }
}

/** The network on p >= 1 inputs, input i covering [i, i]. */
export function buildNetwork(network: ScanNetwork, p: number): Network {
  if (!Number.isSafeInteger(p) || p < 1 || p > MAX_NETWORK_INPUTS) throw new RangeError(`a network has 1 to ${MAX_NETWORK_INPUTS} inputs, not ${p}`);
  const { positions, levels } = levelsOf(network, p);
  const values: NetworkValue[] = [];
  const applications: Application[] = [];
  const cur: number[] = [];
  // Per position, the longest chain behind its value with every application taking a step.
  const counted = new Int32Array(positions);
  let depthCounted = 0;
  for (let k = 0; k < positions; k++) cur.push(k < p ? values.push({ lo: k, hi: k, leaf: k }) - 1 : IDENTITY);
  const down = network === 'blelloch' ? log2ceil(p) : Infinity;
  let root: number | undefined;
  levels.forEach((ops, l) => {
    if (l === down) {
      // Blelloch: the up-sweep's root is the full reduction; the down-sweep starts from the identity.
      root = cur[positions - 1];
      cur[positions - 1] = IDENTITY;
      counted[positions - 1] = 0;
    }
    const before = cur.slice();
    const was = counted.slice();
    for (const op of ops) {
      if (op.b === undefined) {
        cur[op.to] = op.a === IDENTITY ? IDENTITY : before[op.a];
        counted[op.to] = op.a === IDENTITY ? 0 : was[op.a];
        continue;
      }
      const left = before[op.a];
      const right = before[op.b];
      const range = (v: number) => (v === IDENTITY ? undefined : values[v]);
      const a = range(left);
      const b = range(right);
      if (a && b && a.hi + 1 !== b.lo) throw new Error(`${network} on ${p}: [${a.lo}, ${a.hi}] (+) [${b.lo}, ${b.hi}] is not contiguous`);
      const lo = a ? a.lo : b ? b.lo : 0;
      const hi = b ? b.hi : a ? a.hi : -1;
      const app: Application = { level: l + 1, position: op.to, worker: Math.min(op.to, p - 1), left, right, lo, hi, free: !a || !b };
      if (!app.free) {
        app.value = values.push({ lo, hi, app: applications.length }) - 1;
        cur[op.to] = app.value;
      } else cur[op.to] = a ? left : right;
      applications.push(app);
      counted[op.to] = 1 + Math.max(was[op.a], was[op.b]);
      depthCounted = Math.max(depthCounted, counted[op.to]);
    }
  });
  if (network === 'blelloch' && root === undefined) root = cur[positions - 1];
  const inclusive: (number | undefined)[] = new Array(p).fill(undefined);
  const exclusive: number[] = new Array(p).fill(IDENTITY);
  if (network === 'blelloch') {
    for (let i = 0; i < p; i++) exclusive[i] = p === 1 ? IDENTITY : cur[i];
    inclusive[p - 1] = root;
    if (p === 1) inclusive[0] = 0;
  } else {
    for (let i = 0; i < p; i++) inclusive[i] = cur[i];
    for (let i = 1; i < p; i++) exclusive[i] = cur[i - 1];
  }
  return { network, p, positions, levels: levels.length, values, applications, inclusive, exclusive, exclusiveNetwork: network === 'blelloch', depthCounted };
}

/** The network on its own (figures 3.1-3.5): applications with identities counted, fired, levels, and its dataflow depth. */
export interface NetworkStats {
  applications: number;
  fired: number;
  levels: number;
  /** Longest chain of fired applications. */
  depth: number;
  /** Longest chain of applications, free ones counted as one step each. */
  depthCounted: number;
}

export function networkStats(net: Network): NetworkStats {
  // Depth per value (fired chain) and per position (counted chain, identities taking a step).
  const depth = new Int32Array(net.values.length);
  let fired = 0;
  let deepest = 0;
  for (const a of net.applications) {
    if (a.free) continue;
    fired++;
    const d = 1 + Math.max(a.left === IDENTITY ? 0 : depth[a.left], a.right === IDENTITY ? 0 : depth[a.right]);
    depth[a.value!] = d;
    deepest = Math.max(deepest, d);
  }
  return { applications: net.applications.length, fired, levels: net.levels, depth: deepest, depthCounted: net.depthCounted };
}
