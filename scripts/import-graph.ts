// The import graph of a package's source, for the layer tests (core, kernels, agent, designer):
// which file imports which, read with a regex over import/export-from lines, `import('...')`,
// `new URL('....ts', import.meta.url)` (a worker's entry) and a template's fixed part (`../x${ext}`).
// Type-only imports count: a type is a dependency too. Test files are left out unless asked for.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** One import: the importing file and the imported one, relative to the source root (`/`-separated). */
export interface Import {
  from: string;
  /** The resolved target, relative to the root; starts with `../` when it leaves the root. */
  to: string;
  /** The specifier as written. */
  spec: string;
}

export interface ImportGraph {
  files: string[];
  /** Relative imports only; packages (`@pipeloom/kernels/specs`, `node:fs`) are in `packages`. */
  imports: Import[];
  packages: { from: string; spec: string }[];
}

export interface GraphOptions {
  /** Hold test files to the order too (default: left out; a test may use any layer to build what it checks). */
  tests?: boolean;
}

const IMPORT =
  /^\s*(?:import|export)\b[^;'"`]*?\bfrom\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"`]([^'"`$]+)|\bnew\s+URL\(\s*['"](\.{1,2}\/[^'"]+)['"]/gm;
const TEST = /\.test(-worker)?\.(tsx?|mjs)$/;

function sourceFiles(dir: string, tests: boolean, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'fixtures' && entry.name !== 'node_modules' && entry.name !== '__snapshots__') sourceFiles(path, tests, out);
    } else if (/\.(tsx?|mjs)$/.test(entry.name) && (tests || !TEST.test(entry.name)) && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const posix = (path: string) => path.split(sep).join('/');

/** `./x.js` as the file it names: `x.ts` or `x.tsx` where one exists. */
function sourceOf(path: string): string {
  if (!path.endsWith('.js')) return path;
  const stem = path.slice(0, -3);
  return [`${stem}.ts`, `${stem}.tsx`].find((p) => existsSync(p)) ?? `${stem}.ts`;
}

/** The import graph of every `.ts`/`.tsx`/`.mjs` file under `root` (tests only if asked). */
export function importGraph(root: string, options: GraphOptions = {}): ImportGraph {
  const files = sourceFiles(root, options.tests ?? false).sort();
  const graph: ImportGraph = { files: files.map((f) => posix(relative(root, f))), imports: [], packages: [] };
  for (const file of files) {
    const from = posix(relative(root, file));
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const spec = match[1] ?? match[2] ?? match[3] ?? match[4];
      // `new URL` counts for a module a bundler builds from it (a worker's .ts entry), not for a
      // file the code only reads or spawns (data, bin/, a thread's .mjs boot).
      if (match[4] && !/\.tsx?$/.test(spec)) continue;
      if (!spec.startsWith('.')) {
        graph.packages.push({ from, spec });
        continue;
      }
      graph.imports.push({ from, to: posix(relative(root, sourceOf(resolve(dirname(file), spec)))), spec });
    }
  }
  return graph;
}

/** A layer order, lowest first: a folder's name, a root file's name, or folders that share a layer (peers import none of each other). */
export type LayerOrder = readonly (string | readonly string[])[];

/** A file's layer name: its top folder under the root, or for a file at the root `root` where given, else its own name. */
export function layerOf(file: string, root?: string): string {
  return file.includes('/') ? file.split('/')[0] : (root ?? file);
}

/**
 * Every import against `order` (lowest layer first): from a layer to a later one, between two
 * folders of one layer, from or to a layer not in the order, or out of the root. One line each,
 * naming the file and the import. `root` names the layer of the files at the root (default: each its own).
 */
export function layerViolations(graph: ImportGraph, order: LayerOrder, root?: string): string[] {
  const rank = new Map<string, number>();
  order.forEach((layer, i) => (typeof layer === 'string' ? [layer] : layer).forEach((name) => rank.set(name, i)));
  const layerText = (i: number) => [order[i]].flat().join(', ');
  const out: string[] = [];
  for (const file of graph.files) {
    if (!rank.has(layerOf(file, root))) out.push(`${file}: its layer '${layerOf(file, root)}' has no place in the layer order`);
  }
  for (const { from, to, spec } of graph.imports) {
    if (to.startsWith('../')) {
      // Code outside the package's source; a test may read shared test code and any data.
      if (TEST.test(from) || !/(\.(tsx?|m?js)|\/[^./]+)$/.test(to)) continue;
      out.push(`${from} imports '${spec}', outside the package's source`);
      continue;
    }
    const [x, y] = [layerOf(from, root), layerOf(to, root)];
    const a = rank.get(x);
    const b = rank.get(y);
    if (a === undefined || b === undefined || x === y) continue;
    if (b > a) out.push(`${from} imports '${spec}': ${x} may not import ${y} (a higher layer: ${layerText(b)})`);
    else if (b === a) out.push(`${from} imports '${spec}': ${x} may not import ${y} (the same layer: ${layerText(b)})`);
  }
  return out;
}

/** Every import cycle among the files (one per strongly connected component), as a path `a -> b -> a`. */
export function importCycles(graph: ImportGraph): string[] {
  const next = new Map<string, string[]>(graph.files.map((f) => [f, []]));
  for (const { from, to } of graph.imports) if (next.has(to)) next.get(from)!.push(to);
  // Tarjan's strongly connected components.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let counter = 0;
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || next.get(v)!.includes(v)) components.push(component);
    }
  };
  for (const f of graph.files) if (!index.has(f)) visit(f);
  // Name each component by one cycle through its first file (breadth-first: the shortest).
  return components.map((component) => {
    const inside = new Set(component);
    const start = component.sort()[0];
    const parent = new Map<string, string>();
    const queue = [start];
    while (queue.length) {
      const v = queue.shift()!;
      for (const w of next.get(v)!) {
        if (!inside.has(w)) continue;
        if (w === start) {
          const path = [start];
          for (let u: string | undefined = v; u !== undefined && u !== start; u = parent.get(u)) path.unshift(u);
          path.unshift(start);
          return `${path.join(' -> ')} (${component.length} files in the cycle)`;
        }
        if (!parent.has(w)) {
          parent.set(w, v);
          queue.push(w);
        }
      }
    }
    return component.join(', ');
  });
}
