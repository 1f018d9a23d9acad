// The bad-document corpus (packages/core/corpus/bad): every kind of user mistake the issue
// lists, each with the path and words its diagnostic must carry. The CLI, agent and web tests
// read the same files, so one mistake gets the same message everywhere.
export interface BadDocumentCase {
  name: string;
  file: string;
  /** The diagnostic path that must be reported (exactly). */
  path: string;
  /** Words the diagnostic's message must contain. */
  includes: string;
}

export function corpusCases(expected: Record<string, { path: string; includes: string }>, dir: string): BadDocumentCase[] {
  return Object.entries(expected).map(([name, e]) => ({ name, file: `${dir}/${name}.json`, ...e }));
}
