// User mistakes are data, not exceptions: the CLI prints them, the web app selects `path`.
export interface Diagnostic {
  /** Points at the element, e.g. `app.nodes[2].params.width` or `mapping.b`. */
  path: string;
  message: string;
  /** How to fix it. */
  hint?: string;
  severity: 'error' | 'warning';
}

export function error(path: string, message: string, hint?: string): Diagnostic {
  return { path, message, hint, severity: 'error' };
}

export function warning(path: string, message: string, hint?: string): Diagnostic {
  return { path, message, hint, severity: 'warning' };
}

export function formatDiagnostic(d: Diagnostic): string {
  return `${d.severity === 'warning' ? 'warning: ' : ''}${d.path}: ${d.message}${d.hint ? ` (${d.hint})` : ''}`;
}

export const hasErrors = (ds: readonly Diagnostic[]) => ds.some((d) => d.severity === 'error');
