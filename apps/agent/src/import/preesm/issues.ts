// What an import could not carry over (warnings) or cannot read at all (errors), each naming
// the file, the line and the element, with the fix where there is one.

export interface ImportIssue {
  severity: 'error' | 'warning';
  /** The file as the user named it (or as a .pi refinement resolved). */
  file: string;
  line?: number;
  /** The element: `actor Worker`, `fifo Gen.out -> Worker.in`, `operator Core3`, `param N`. */
  element: string;
  message: string;
  hint?: string;
}

export function formatIssue(i: ImportIssue): string {
  return `${i.severity}: ${i.file}${i.line ? `:${i.line}` : ''}: ${i.element}: ${i.message}${i.hint ? ` (${i.hint})` : ''}`;
}

/** Collects issues; the same message about the same element is kept once. */
export class Issues {
  readonly list: ImportIssue[] = [];
  private seen = new Set<string>();

  add(issue: ImportIssue): void {
    const key = `${issue.severity}|${issue.file}|${issue.element}|${issue.message}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.list.push(issue);
  }
  error(file: string, line: number | undefined, element: string, message: string, hint?: string): void {
    this.add({ severity: 'error', file, line, element, message, hint });
  }
  warn(file: string, line: number | undefined, element: string, message: string, hint?: string): void {
    this.add({ severity: 'warning', file, line, element, message, hint });
  }
  get errors(): ImportIssue[] {
    return this.list.filter((i) => i.severity === 'error');
  }
  get warnings(): ImportIssue[] {
    return this.list.filter((i) => i.severity === 'warning');
  }
}
