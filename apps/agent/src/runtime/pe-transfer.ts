import { transferKey, recvLane, sendLane, waitSlice } from '@pipeloom/core';
import { align4, depthOf, gpuRange, hostBytes, slotOf, type GpuSlots } from './memory.js';
import { holdForLink } from './emulate.js';
import { published, publish, stagingView } from './staging.js';
import { nowUs } from './pe-lifecycle.js';
import type { PeState } from './pe-state.js';
import type { Transfer } from './pe-types.js';

// A static run's same-host transfers on the PE thread that drives them (pe-worker.ts): host to
// host, host to and from this PE's GPU, and each half of a GPU-to-GPU copy staged through host
// memory (staging.ts).

export async function transfer(s: PeState, t: Transfer, k: number, it: number): Promise<void> {
  const other = t.fromPe === s.pe ? t.toPe : t.fromPe;
  const t0 = nowUs();
  const src = s.slots(t.from.buffer);
  const dst = s.slots(t.to.buffer);
  const sSlot = slotOf(k, t.from.lag, depthOf(src));
  const dSlot = slotOf(k, t.to.lag, depthOf(dst));
  // Only the transfer's range moves (a split's part), into the destination's place (a view).
  if (src.kind === 'cpu' && dst.kind === 'gpu') await s.copies.upload(hostBytes(src, sSlot, t.from), dst.buffers[dSlot], gpuRange(dst, t.to).offset);
  // Staging per destination: a phase reads parts of one GPU buffer back into several host
  // buffers at once (a scan's blocks), and one mappable buffer cannot be mapped twice.
  else if (src.kind === 'gpu' && dst.kind === 'cpu')
    await s.copies.readback(src.buffers[sSlot], hostBytes(dst, dSlot, t.to), `read ${t.to.buffer}`, gpuRange(src, t.from).offset);
  else if (src.kind === 'cpu' && dst.kind === 'cpu') {
    const into = hostBytes(dst, dSlot, t.to);
    into.set(hostBytes(src, sSlot, t.from).subarray(0, into.byteLength));
  } else {
    // Two buffers on this GPU (the compiler does not produce these): a device copy.
    const enc = s.device!.createCommandEncoder();
    enc.copyBufferToBuffer(
      (src as GpuSlots).buffers[sSlot],
      gpuRange(src as GpuSlots, t.from).offset,
      (dst as GpuSlots).buffers[dSlot],
      gpuRange(dst as GpuSlots, t.to).offset,
      align4(t.bytes),
    );
    s.device!.queue.submit([enc.finish()]);
    await s.gpu(s.device!.queue.onSubmittedWorkDone());
  }
  if (s.init.emulateLinks) await s.guard(holdForLink(t, t0, nowUs));
  s.trace({
    host: s.init.host,
    pe: s.pe,
    thread: other === t.fromPe ? recvLane(other) : sendLane(other),
    kind: 'transfer',
    name: t.to.buffer,
    buffer: t.to.buffer,
    from: t.from.buffer,
    iteration: it,
    cycle: k,
    start: t0,
    end: nowUs(),
    bytes: t.bytes,
  });
}

export function stageHalf(s: PeState, t: Transfer): void {
  const memory = s.init.staging[transferKey(t.from.buffer, t.to.buffer)];
  if (!memory) throw new Error(`no staging memory for ${t.from.buffer} -> ${t.to.buffer} (${t.fromPe} -> ${t.toPe})`);
  s.staged.set(t, stagingView(memory, t.bytes));
}

/**
 * This PE's half of a GPU-to-GPU transfer (staging.ts): the source reads its slot back into
 * host memory and publishes the iteration; the destination waits for it and uploads it into
 * its slot. Same slots as any transfer of its phase. Emulated, the source holds the bytes for
 * the link's time before publishing them, so the whole copy lasts at least that.
 */
export async function stagedHalf(s: PeState, t: Transfer, k: number, it: number): Promise<void> {
  const st = s.staged.get(t)!;
  const via = `(${t.link.kind}, staged through host)`;
  const common = { host: s.init.host, pe: s.pe, buffer: t.to.buffer, from: t.from.buffer, iteration: it, cycle: k, bytes: t.bytes };
  const t0 = nowUs();
  if (t.fromPe === s.pe) {
    const src = s.memory.get(t.from.buffer) as GpuSlots;
    await s.copies.readback(src.buffers[slotOf(k, t.from.lag, depthOf(src))], st.bytes, `nvlink ${t.to.buffer}`, gpuRange(src, t.from).offset);
    if (s.init.emulateLinks) await s.guard(holdForLink(t, t0, nowUs));
    publish(st, it);
    s.trace({ ...common, thread: sendLane(t.toPe), kind: 'transfer', name: `${t.to.buffer} ${t.fromPe}->host ${via}`, start: t0, end: nowUs() });
  } else {
    const dst = s.memory.get(t.to.buffer) as GpuSlots;
    await s.guard(published(st, it));
    const t1 = nowUs();
    await s.copies.upload(st.bytes, dst.buffers[slotOf(k, t.to.lag, depthOf(dst))], gpuRange(dst, t.to).offset);
    s.trace({ ...common, thread: recvLane(t.fromPe), kind: 'wait', name: waitSlice(t.to.buffer, via), start: t0, end: t1 });
    s.trace({ ...common, thread: recvLane(t.fromPe), kind: 'transfer', name: `${t.to.buffer} host->${t.toPe} ${via}`, start: t1, end: nowUs() });
  }
}
