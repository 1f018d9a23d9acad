import type { AppNode, MappingTarget, ProjectDocument, WrittenDocument } from '@pipeloom/core';

// What a mapping entry names: one PE, or, for a node with `tasks`, a list of PEs its shares take
// in turn (share j on list[j mod P], the combine on list[0]; core document/tasks.ts), or, for a
// scan node, its workers in order (worker i on list[i]; core document/scan.ts). Views and
// changes read entries through these, never as a bare string.

/** The PEs an entry names, in its order; none for no entry. */
export function pesOf(t: MappingTarget | undefined): string[] {
  if (t === undefined) return [];
  return typeof t === 'string' ? [t] : t;
}

/** The PE a node's colour and lane come from: the only one, or the list's first (it runs the combine). */
export const firstPe = (t: MappingTarget | undefined): string | undefined => pesOf(t)[0];

/** Whether an entry names PE `pe`. */
export const mapsTo = (t: MappingTarget | undefined, pe: string) => pesOf(t).includes(pe);

/** An entry as a badge: `gpu0@h0`, or `gpu0@h0 +1` for a list of two. */
export function targetLabel(t: MappingTarget | undefined): string {
  const pes = pesOf(t);
  return pes.length > 1 ? `${pes[0]} +${pes.length - 1}` : (pes[0] ?? '');
}

/** An entry in a sentence (a title): the list spelled out with what it means. */
export function targetTitle(t: MappingTarget | undefined, scan = false): string {
  const pes = pesOf(t);
  if (pes.length <= 1) return pes[0] ?? 'unmapped';
  if (scan) return `${pes.length} workers in order: ${pes.map((p, i) => `w${i} on ${p}`).join(', ')}`;
  return `shares on ${pes.join(', ')} in turn (share j on PE j mod ${pes.length}); the sum on ${pes[0]}`;
}

/** The entry for a set of PEs: none, one PE as a plain id, or the list (the document stays as simple as it can). */
export function targetOf(pes: readonly string[]): MappingTarget | null {
  if (!pes.length) return null;
  return pes.length === 1 ? pes[0] : [...pes];
}

/** Whether a node may be mapped onto a list: it has `tasks`, or it is a scan (its workers, in order); core refuses a list on any other. */
export const takesList = (n: Pick<AppNode, 'tasks' | 'type'> | undefined) => n?.tasks !== undefined || n?.type === 'scan';

/** Whether two entries put two nodes on one PE (a list spreads shares: never the same place as anything). */
export function samePlace(a: MappingTarget | undefined, b: MappingTarget | undefined): boolean {
  return typeof a === 'string' && a === b;
}

/**
 * The entry without the PEs in `gone` (deleted): undefined when it names none of them, `null`
 * when nothing is left, else the PEs it keeps (one left: that PE).
 */
export function withoutPes(t: MappingTarget, gone: ReadonlySet<string>): MappingTarget | null | undefined {
  const pes = pesOf(t);
  const kept = pes.filter((p) => !gone.has(p));
  return kept.length === pes.length ? undefined : targetOf(kept);
}

/** The entry with PE ids renamed by `r`. */
export function renamePes(t: MappingTarget, r: (pe: string) => string): MappingTarget {
  return typeof t === 'string' ? r(t) : t.map(r);
}

/**
 * The PE a node of the lowered graph runs on, from the mapping as written: its own entry
 * (`X[2]` may be mapped itself), else, for share j of a node X mapped onto a list L, L[j mod
 * |L|], as core's lowering gives it (tasks.ts); the combine X keeps L[0].
 */
export function loweredPe(mapping: Record<string, MappingTarget>, id: string): string | undefined {
  if (Object.hasOwn(mapping, id)) return firstPe(mapping[id]);
  const m = /^(.*)\[(\d+)\]$/.exec(id);
  if (!m || !Object.hasOwn(mapping, m[1])) return undefined;
  const pes = pesOf(mapping[m[1]]);
  return pes.length ? pes[Number(m[2]) % pes.length] : undefined;
}

/**
 * The document for core's designer helpers typed for single-PE mappings that never read a
 * mapping value: flattenDocument passes entries through as they are, paramTable reads params.
 */
export const forCore = (doc: WrittenDocument) => doc as ProjectDocument;
