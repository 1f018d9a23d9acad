import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { predict } from '../predict/predict.js';
import { TRACE_CSV_COLUMNS, toTraceCsv } from './csv.js';
import type { TraceEvent } from './event.js';

/** RFC 4180, read strictly: records end in CRLF; a quoted field may hold commas, CRLF and doubled quotes. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let i = 0;
  while (i < text.length) {
    let value = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quoted field');
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            value += '"';
            i += 2;
          } else {
            i++;
            break;
          }
        } else value += text[i++];
      }
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\r' && text[i] !== '\n') {
        if (text[i] === '"') throw new Error(`a quote inside an unquoted field at ${i}`);
        value += text[i++];
      }
    }
    record.push(value);
    if (text[i] === ',') i++;
    else if (text.startsWith('\r\n', i)) {
      records.push(record);
      record = [];
      i += 2;
    } else throw new Error(`expected , or CRLF at ${i}, found ${JSON.stringify(text[i])}`);
  }
  if (record.length) throw new Error('the last record does not end in CRLF');
  return records;
}

const ev = (start: number, end: number, over: Partial<TraceEvent> = {}): TraceEvent => ({
  host: 'h0',
  pe: 'cpu0',
  thread: 'main',
  kind: 'fire',
  name: 'A',
  iteration: 0,
  cycle: 0,
  start,
  end,
  ...over,
});

describe('per-event CSV trace', () => {
  it('reads back, field for field, names holding commas, quotes and line breaks', () => {
    const events = [
      ev(2.5, 4, {
        kind: 'transfer',
        name: 'bn_4 gpu0->host (nvlink, staged through "host")\r\nnext',
        buffer: 'bn_4',
        bytes: 4096,
        thread: 'send:cpu,1',
        iteration: 1,
        cycle: 3,
      }),
      ev(0, 1.25, { name: 'P', node: 'P' }),
      ev(-3, -1, { kind: 'wait', name: 'wait bn_4', host: 'h1', pe: 'gpu0@h1' }),
    ];
    const rows = parseCsv(toTraceCsv(events));
    expect(rows[0]).toEqual([...TRACE_CSV_COLUMNS]);
    const objects = rows.slice(1).map((r) => Object.fromEntries(r.map((v, k) => [rows[0][k], v])));
    // In start order; times in seconds.
    expect(objects).toEqual([
      {
        lane: 'gpu0@h1 main',
        kind: 'wait',
        name: 'wait bn_4',
        iteration: '0',
        start: '-0.000003000',
        duration: '0.000002000',
        bytes: '',
        cycle: '0',
        host: 'h1',
        pe: 'gpu0@h1',
        thread: 'main',
        node: '',
        buffer: '',
        value: '',
        task: '',
        share: '',
        attempt: '',
      },
      {
        lane: 'cpu0 main',
        kind: 'fire',
        name: 'P',
        iteration: '0',
        start: '0.000000000',
        duration: '0.000001250',
        bytes: '',
        cycle: '0',
        host: 'h0',
        pe: 'cpu0',
        thread: 'main',
        node: 'P',
        buffer: '',
        value: '',
        task: '',
        share: '',
        attempt: '',
      },
      {
        lane: 'cpu0 send:cpu,1',
        kind: 'transfer',
        name: events[0].name,
        iteration: '1',
        start: '0.000002500',
        duration: '0.000001500',
        bytes: '4096',
        cycle: '3',
        host: 'h0',
        pe: 'cpu0',
        thread: 'send:cpu,1',
        node: '',
        buffer: 'bn_4',
        value: '',
        task: '',
        share: '',
        attempt: '',
      },
    ]);
  });

  it('gives a counter sample its value and a task-bag fire its task, share and attempt', () => {
    const events: TraceEvent[] = [
      { host: 'coordinator', pe: 'bag', thread: 'bag', kind: 'counter', name: 'bag depth', value: 36, start: 0, end: 0, iteration: -1, cycle: -1 },
      ev(1, 2, { name: 'projbp[3]@5 (2)', node: 'projbp', iteration: 5, cycle: -1, task: { id: 'projbp[3]@5', share: 3, attempt: 2 } }),
      ev(2, 3, { name: 'update@5', node: 'update', iteration: 5, cycle: -1, task: { id: 'update@5', attempt: 1 } }),
    ];
    const rows = parseCsv(toTraceCsv(events));
    const col = (name: string) => rows.slice(1).map((r) => r[rows[0].indexOf(name)]);
    expect(col('kind')).toEqual(['counter', 'fire', 'fire']);
    expect(col('duration')).toEqual(['0.000000000', '0.000001000', '0.000001000']);
    expect(col('value')).toEqual(['36', '', '']);
    expect(col('task')).toEqual(['', 'projbp[3]@5', 'update@5']);
    expect(col('share')).toEqual(['', '3', '']);
    expect(col('attempt')).toEqual(['', '2', '1']);
  });

  it('has one row per event of a predicted run, with its duration', () => {
    const piic = JSON.parse(readFileSync(new URL('../../../../examples/piic.json', import.meta.url), 'utf8'));
    const r = predict(piic, { iterations: 10 });
    if (!r.ok) throw new Error('P-I-I-C must predict');
    const timeline = r.prediction.overlap!.timeline;
    const rows = parseCsv(toTraceCsv(timeline)).slice(1);
    expect(rows).toHaveLength(timeline.length);
    const busy = (kind: string) => rows.filter((row) => row[1] === kind).reduce((s, row) => s + Number(row[5]), 0);
    const expected = timeline.filter((e) => e.kind === 'fire').reduce((s, e) => s + (e.end - e.start) / 1e6, 0);
    expect(busy('fire')).toBeCloseTo(expected, 6);
  });
});
