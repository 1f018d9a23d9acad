// The baselines' GPU-to-host copy, written out by hand (no framework): copy into a mapped
// staging buffer, map it, copy into the host array.
export async function readBack(device: GPUDevice, src: GPUBuffer, staging: GPUBuffer, bytes: number, into: Float32Array): Promise<void> {
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(src, 0, staging, 0, bytes);
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  into.set(new Float32Array(staging.getMappedRange()));
  staging.unmap();
}
