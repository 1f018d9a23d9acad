import { useEffect } from 'react';

/**
 * Escape closes a scan overlay (Expand, Timeline) and only it: the key is caught before the
 * designer's own Escape (clear the selection) sees it.
 */
export function useEscapeToClose(onClose: () => void): void {
  useEffect(() => {
    const key = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      e.stopPropagation();
      onClose();
    };
    window.addEventListener('keydown', key, true);
    return () => window.removeEventListener('keydown', key, true);
  }, [onClose]);
}
