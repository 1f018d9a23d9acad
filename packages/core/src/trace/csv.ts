import { nanoseconds, secondsText } from '../util/units.js';
import type { TraceEvent } from './event.js';
import { laneName } from './lanes.js';

// One row per trace event, for pandas and R (RFC 4180: CRLF line ends, a field holding a
// comma, a quote or a line break quoted, its quotes doubled). Times in seconds to the
// nanosecond, as the Paje export's; rows in start order.

export const TRACE_CSV_COLUMNS = [
  'lane',
  'kind',
  'name',
  'iteration',
  'start',
  'duration',
  'bytes',
  'cycle',
  'host',
  'pe',
  'thread',
  'node',
  'buffer',
  'value',
  'task',
  'share',
  'attempt',
] as const;

const field = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/**
 * The events as CSV text with a header row (TRACE_CSV_COLUMNS). `lane` is `<pe> <thread>`,
 * as the run summary and the Paje export name lanes; `bytes`, `node` and `buffer` are empty
 * where the event has none. A counter sample (kind `counter`, duration 0) has its `value`; a
 * task-bag fire its `task` id, `share` and `attempt`; those cells are empty on other rows.
 */
export function toTraceCsv(events: readonly TraceEvent[]): string {
  const order = events.map((_, i) => i).sort((a, b) => events[a].start - events[b].start || a - b);
  const rows: string[] = [TRACE_CSV_COLUMNS.join(',')];
  for (const i of order) {
    const e = events[i];
    const start = nanoseconds(e.start);
    const cells = [
      laneName(e.pe, e.thread),
      e.kind,
      e.name,
      String(e.iteration),
      secondsText(start),
      secondsText(Math.max(0, nanoseconds(e.end) - start)),
      e.bytes === undefined ? '' : String(e.bytes),
      String(e.cycle),
      e.host,
      e.pe,
      e.thread,
      e.node ?? '',
      e.buffer ?? '',
      e.value === undefined ? '' : String(e.value),
      e.task?.id ?? '',
      e.task?.share === undefined ? '' : String(e.task.share),
      e.task ? String(e.task.attempt) : '',
    ];
    rows.push(cells.map(field).join(','));
  }
  return `${rows.join('\r\n')}\r\n`;
}
