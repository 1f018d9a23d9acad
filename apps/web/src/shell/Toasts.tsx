import { projectStore, useProject } from '../store/project.js';

export function Toasts() {
  const toasts = useProject((s) => s.toasts);
  return (
    <div className="toasts" aria-live="polite">
      {toasts.map((t) => (
        <div key={t.id} className={`toast ${t.kind}`} data-testid={`toast-${t.kind}`} onClick={() => projectStore.getState().dismiss(t.id)}>
          {t.message}
        </div>
      ))}
    </div>
  );
}
