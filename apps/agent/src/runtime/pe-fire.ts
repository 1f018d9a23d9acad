import { getKernel, withDefaults } from '@pipeloom/kernels';
import { align4, hostBytes, hostView, type HostSlots } from './memory.js';
import { AbortError } from './abort.js';
import { holdUntil } from './emulate.js';
import { nowUs } from './pe-lifecycle.js';
import { post, type PeState } from './pe-state.js';
import type { Fire, GatherSlots, KernelReport, PortSlots, PreparedFire } from './pe-types.js';

// A static run's firings on its PE thread (pe-worker.ts): each kernel prepared once, then each
// firing in place on host memory, on the GPU, or through a GPU PE's CPU twin; timed by the
// watchdog's stamp, its report checked.

export async function prepareFire(s: PeState, action: Fire): Promise<PreparedFire> {
  // Only registered kernels run: getKernel refuses any other id.
  const kernel = getKernel(action.kernel);
  const params = withDefaults(kernel, action.params);
  const f: PreparedFire = { kernel, params, state: {} };
  if (s.init.program.kind !== 'gpu') return f;
  if (kernel.gpu) {
    try {
      f.gpu = await s.life.track(kernel.gpu.prepare(s.device!, params));
    } catch (e) {
      throw new Error(`node ${action.node} (${action.kernel}) on ${s.pe}: ${e instanceof Error ? e.message : String(e)}`);
    }
  } else {
    const views = (ports: Record<string, { buffer: string; bytes?: number }>) =>
      Object.fromEntries(Object.entries(ports).map(([port, acc]) => [port, scratch(s, acc.buffer, acc.bytes)]));
    f.twin = { inputs: { ...views(action.inputs), ...gatherScratches(s, action) }, outputs: views(action.outputs) };
  }
  return f;
}

/** Host scratch for `buffer`'s data (or `bytes` of it: a view access), typed as its element. */
function scratch(s: PeState, buffer: string, bytes?: number): ArrayBufferView {
  const info = s.init.buffers[buffer];
  const buf = new ArrayBuffer(align4(bytes ?? info?.bytes ?? 0));
  return info?.element === 'f32'
    ? new Float32Array(buf)
    : info?.element === 'u32'
      ? new Uint32Array(buf)
      : info?.element === 'i32'
        ? new Int32Array(buf)
        : new Uint8Array(buf);
}

/** Per input gathered from parts (not views of one base): a host scratch of their total size, typed as the first part's buffer. */
function gatherScratches(s: PeState, a: Fire): Record<string, ArrayBufferView> {
  const out: Record<string, ArrayBufferView> = {};
  for (const [port, parts] of Object.entries(a.parts ?? {})) {
    if (a.inputs[port]) continue;
    out[port] = scratch(
      s,
      parts[0].buffer,
      parts.reduce((n, x) => n + (x.bytes ?? s.init.buffers[x.buffer]?.bytes ?? 0), 0),
    );
  }
  return out;
}

export async function fire(s: PeState, a: Fire, k: number, it: number): Promise<void> {
  const f = s.fires.get(a)!;
  const ins = s.pick(a.inputs, k);
  const outs = s.pick(a.outputs, k);
  const gathers = s.gathers(a, k);
  const t0 = nowUs();
  let report: KernelReport | void;
  s.life.stamp.begin(s.fireIndex.get(a)!, it);
  try {
    report = await runKernel(s, a, f, ins, outs, gathers, it);
  } catch (e) {
    // A kernel that throws (a CPU twin's KernelError: a refused range, a non-finite result) fails the run naming its node.
    if (e instanceof AbortError) throw e;
    s.fail({ host: s.init.host, pe: s.pe, node: a.node, iteration: it, message: `${s.pe}: ${e instanceof Error ? e.message : String(e)}` });
    throw new AbortError('kernel failed');
  } finally {
    s.life.stamp.end();
  }
  // Emulated device: the kernel ran (and is checked below); the rest of its time is waited out.
  // The map names GPU nodes (--emulate-devices) and generic.work stand-ins on any PE.
  const emulated = s.init.emulateDevices?.[a.node];
  if (emulated) await s.guard(holdUntil(t0 + emulated * 1e6, nowUs));
  // A slowed PE (a labelled emulation): the firing lasts `slow` times as long, the rest on a timer.
  const slow = s.init.slow;
  if (slow && slow > 1) await s.guard(holdUntil(t0 + (nowUs() - t0) * slow, nowUs));
  s.trace({ host: s.init.host, pe: s.pe, thread: 'main', kind: 'fire', name: a.node, node: a.node, iteration: it, cycle: k, start: t0, end: nowUs() });
  checkReport(s, a, it, report);
}

/** A firing's report: a failed check fails the run naming node and iteration; values go to the coordinator. */
export function checkReport(s: PeState, a: Fire, it: number, report: KernelReport | void): void {
  if (!report) return;
  if (!report.ok) {
    s.fail({ host: s.init.host, pe: s.pe, node: a.node, iteration: it, message: report.message ?? `node ${a.node} on ${s.pe}, iteration ${it}: check failed` });
    throw new AbortError('check failed');
  }
  if (report.values) post({ type: 'report', node: a.node, iteration: it, values: report.values });
}

/** One firing's kernel: the CPU kernel in place, or the GPU kernel (or a GPU PE's CPU twin) until its work is done. */
async function runKernel(
  s: PeState,
  a: Fire,
  f: PreparedFire,
  ins: PortSlots,
  outs: PortSlots,
  gathers: GatherSlots,
  it: number,
): Promise<KernelReport | void> {
  let report: KernelReport | void = undefined;
  if (s.init.program.kind === 'cpu') {
    // Views are subarrays of the storage: a split's part, a join's parts laid out together.
    const view = (x: PortSlots[string]) => hostView(x.slots as HostSlots, x.slot, x.range);
    const inputs = Object.fromEntries(Object.entries(ins).map(([p, x]) => [p, view(x)]));
    for (const [port, parts] of Object.entries(gathers)) inputs[port] = gatherHost(s, a, port, parts);
    report = f.kernel.cpu({
      params: f.params,
      iteration: it,
      inputs,
      outputs: Object.fromEntries(Object.entries(outs).map(([p, x]) => [p, view(x)])),
      state: f.state,
    });
  } else {
    const device = s.device!;
    const encoder = device.createCommandEncoder();
    const { firing, after } = s.copies.gpuFiring(a, ins, outs, gathers, it, encoder);
    if (f.gpu) {
      f.gpu.encode(encoder, firing);
      after(encoder);
      device.queue.submit([encoder.finish()]);
      await s.gpu(device.queue.onSubmittedWorkDone());
      if (f.gpu.report) report = await s.gpu(f.gpu.report(firing));
    } else {
      // Kernels without WGSL: read inputs back, run the CPU twin, upload outputs.
      device.queue.submit([encoder.finish()]);
      const twin = f.twin!;
      for (const [port, gbuf] of Object.entries(firing.inputs)) await s.copies.readback(gbuf, twin.inputs[port]);
      report = f.kernel.cpu({ params: f.params, iteration: it, inputs: twin.inputs, outputs: twin.outputs, state: f.state });
      for (const [port, gbuf] of Object.entries(firing.outputs)) {
        const v = twin.outputs[port];
        device.queue.writeBuffer(gbuf, 0, v.buffer as ArrayBuffer, v.byteOffset, align4(v.byteLength));
      }
      const copies = device.createCommandEncoder();
      after(copies);
      device.queue.submit([copies.finish()]);
      await s.gpu(device.queue.onSubmittedWorkDone());
    }
  }
  return report;
}

/** A CPU firing's input fed in parts that are not laid out together: the parts copied, in order, into one scratch (a gather). */
function gatherHost(s: PeState, a: Fire, port: string, parts: GatherSlots[string]): ArrayBufferView {
  const key = `${a.node}.${port}`;
  let into = s.gatherBuffers.get(key);
  if (!into) s.gatherBuffers.set(key, (into = gatherScratches(s, a)[port]));
  const bytes = new Uint8Array(into.buffer, into.byteOffset, into.byteLength);
  let at = 0;
  for (const x of parts) {
    const part = hostBytes(x.slots as HostSlots, x.slot, x.range);
    bytes.set(part, at);
    at += part.byteLength;
  }
  return into;
}
