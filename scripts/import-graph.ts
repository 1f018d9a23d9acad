// The import graph of a package's source, for the layer tests (core, kernels): which file
// imports which, read with a regex over import/export-from lines and `import('...')` types
// (type-only imports count: a type is a dependency too). Test files are left out: a test may
// use any layer of its package to build what it checks.
import { readdirSync, readFileSync } from 'node:fs';
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

const IMPORT = /^\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, out);
    else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const posix = (path: string) => path.split(sep).join('/');

/** The import graph of every non-test `.ts`/`.tsx` file under `root`. */
export function importGraph(root: string): ImportGraph {
  const files = sourceFiles(root).sort();
  const graph: ImportGraph = { files: files.map((f) => posix(relative(root, f))), imports: [], packages: [] };
  for (const file of files) {
    const from = posix(relative(root, file));
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const spec = match[1] ?? match[2] ?? match[3];
      if (!spec.startsWith('.')) {
        graph.packages.push({ from, spec });
        continue;
      }
      const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts').replace(/\.jsx$/, '.tsx'));
      graph.imports.push({ from, to: posix(relative(root, target)), spec });
    }
  }
  return graph;
}

/** A file's layer: its top folder under the root, or its own name for a file at the root. */
export function layerOf(file: string): string {
  return file.split('/')[0];
}

/**
 * Every import against `order` (lowest layer first): from a layer to a later one, from or to a
 * layer not in the order, or out of the root. One line each, naming the file and the import.
 */
export function layerViolations(graph: ImportGraph, order: readonly string[]): string[] {
  const rank = new Map(order.map((layer, i) => [layer, i]));
  const out: string[] = [];
  for (const file of graph.files) {
    if (!rank.has(layerOf(file))) out.push(`${file}: its layer '${layerOf(file)}' has no place in the layer order`);
  }
  for (const { from, to, spec } of graph.imports) {
    if (to.startsWith('../')) {
      out.push(`${from} imports '${spec}', outside the package's source`);
      continue;
    }
    const a = rank.get(layerOf(from));
    const b = rank.get(layerOf(to));
    if (a !== undefined && b !== undefined && b > a) out.push(`${from} imports '${spec}': ${layerOf(from)} may not import ${layerOf(to)} (a higher layer)`);
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
