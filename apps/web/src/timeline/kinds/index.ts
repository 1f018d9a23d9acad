import { TRACE_KINDS } from '@pipeloom/core';
import type { EventKind } from './kind.js';
import { fire } from './fire.js';
import { transfer } from './transfer.js';
import { wait } from './wait.js';
import { barrier } from './barrier.js';
import { counter } from './counter.js';

export type { EventKind } from './kind.js';

const byId = new Map<string, EventKind>([fire, transfer, wait, barrier, counter].map((k) => [k.id, k]));

/** The slice kinds by core's kind code (TraceColumns stores codes): a kind core adds without a module here is a programming error. */
export const EVENT_KINDS: readonly EventKind[] = TRACE_KINDS.map((id) => {
  const k = byId.get(id);
  if (!k) throw new Error(`timeline: no event kind module for trace kind ${id}`);
  return k;
});
