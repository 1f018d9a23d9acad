// Prints what the run took: each project's wall time and its files' summed time, the 15 slowest
// files, then the plain closing line CI reads (scripts/test.mjs): "vitest: N passed, N failed".
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

const SLOWEST = 15;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export default class SummaryReporter implements Reporter {
  /** Per project, when its first file was queued and its last one ended (performance.now()). */
  private readonly spans = new Map<string, { start: number; end: number }>();

  onTestModuleQueued(m: TestModule) {
    const name = m.project.name;
    const span = this.spans.get(name);
    if (!span) this.spans.set(name, { start: performance.now(), end: performance.now() });
  }

  onTestModuleEnd(m: TestModule) {
    const span = this.spans.get(m.project.name);
    if (span) span.end = performance.now();
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>) {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        const s = t.result().state;
        if (s === 'passed') passed++;
        else if (s === 'failed') failed++;
        else skipped++;
      }
    }
    // A file's time in its worker: importing it (collect), its setup files, its tests and hooks.
    const time = (m: TestModule) => {
      const d = m.diagnostic();
      return d.collectDuration + d.setupDuration + d.duration;
    };
    if (modules.length > 1) {
      const lines = [...this.spans].map(([name, span]) => {
        const files = modules.filter((m) => m.project.name === name);
        const sum = files.reduce((a, m) => a + time(m), 0);
        return `  ${(name || '(root)').padEnd(12)} ${String(files.length).padStart(4)} files  wall ${seconds(span.end - span.start).padStart(8)}  files' sum ${seconds(sum).padStart(8)}`;
      });
      console.log(`\nprojects:\n${lines.join('\n')}`);
      const slowest = [...modules].sort((a, b) => time(b) - time(a)).slice(0, SLOWEST);
      console.log(
        `\n${slowest.length} slowest files:\n${slowest.map((m) => `  ${seconds(time(m)).padStart(8)}  ${(m.project.name || '').padEnd(12)} ${relative(process.cwd(), m.moduleId)}`).join('\n')}`,
      );
    }
    console.log(`\nvitest: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  }
}
