import type { RunResult } from '@pipeloom/core';

// What a run's sinks wrote, in its text summary (static and task-bag alike); their per-firing
// reports (the totals so far) are left out of the report lines, which would only repeat them.

export function writeLines(writes: RunResult['writes']): string[] {
  return writes.map(
    (w) =>
      `  wrote        ${w.path}: ${w.files} file${w.files === 1 ? '' : 's'}, ${w.bytes} bytes, ${w.iterations} iteration${w.iterations === 1 ? '' : 's'} (node ${w.node} on ${w.pe})`,
  );
}

/** The reports of nodes that are not sinks. */
export function notSinks(reports: RunResult['reports'], writes: RunResult['writes']): RunResult['reports'] {
  const sinks = new Set(writes.map((w) => w.node));
  return reports.filter((r) => !sinks.has(r.node));
}
