/**
 * Where a document's PE meets an agent's. An agent serves one CPU PE per core it is given,
 * `cpu0@<host> .. cpu{N-1}@<host>`; a document written for one CPU per host names it
 * `cpu@<host>`, which is the first core, `cpu0@<host>`. Every matcher (the deploy check, the
 * requires check, the task bag's pool, the agent's own checks) goes through here, so the alias
 * has one definition; traces and failures keep the id the document wrote.
 */

/** `cpu@h0` -> `cpu0@h0`; every other id as it is. */
export function agentPeId(id: string): string {
  return id.startsWith('cpu@') ? `cpu0${id.slice(3)}` : id;
}

/** Whether two PE ids name one PE of an agent (`cpu@h0` and `cpu0@h0` do). */
export function samePe(a: string, b: string): boolean {
  return a === b || agentPeId(a) === agentPeId(b);
}

/** The PE among an agent's `pes` that a document's `id` names: the same id, else its alias. */
export function servedPe<P extends { id: string }>(pes: readonly P[], id: string): P | undefined {
  return pes.find((p) => p.id === id) ?? pes.find((p) => samePe(p.id, id));
}
