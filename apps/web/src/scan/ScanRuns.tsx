import { useMemo, useState } from 'react';
import type { WrittenDocument } from '@pipeloom/core';
import { modelled, scanInstances, type ScanInstance } from './instances.js';
import { ScanTimeline } from './ScanTimeline.js';

// The Run view's way into the scan timeline: one button per scan node of the document (its
// model's settings complete), opening the same view as the inspector's Timeline, so a run's
// scan is read against its simulations where the run is watched.

export function ScanRuns({ doc }: { doc: WrittenDocument }) {
  const scans = useMemo(() => scanInstances(doc).filter((s) => modelled(s)), [doc]);
  const [open, setOpen] = useState<ScanInstance | null>(null);
  if (!scans.length) return null;
  const m = open && modelled(open);
  return (
    <div className="run-buttons" data-testid="run-scans">
      {scans.map((s) => (
        <button
          key={s.flatId}
          data-testid={`run-scan-timeline-${s.flatId}`}
          onClick={() => setOpen(s)}
          title={`Scan ${s.flatId}: lanes per worker, simulated (mean and replayed costs) and measured, on one time axis`}
        >
          Scan timeline: {s.flatId}
        </button>
      ))}
      {open && m && (
        <ScanTimeline
          id={open.flatId}
          doc={doc}
          {...m}
          pes={open.pes}
          operator={open.settings.operator}
          own={open.settings.own}
          onClose={() => setOpen(null)}
        />
      )}
    </div>
  );
}
