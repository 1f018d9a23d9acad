// Node-only: a WebGPU device through Dawn for tests and benches (the llvmpipe recipe of
// shared/ENVIRONMENT.md). Never exported from the package index: the web app bundles that.
import { create, globals } from 'webgpu';

export interface TestDevice {
  device: GPUDevice;
  adapter: GPUAdapter;
  /** Adapter description, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)". */
  name: string;
  /**
   * Destroys the device and waits (at most a second) for its `lost` promise: dawn.node aborts
   * the whole process when a thread (a test runner's worker) goes with a promise still pending.
   */
  destroy(): Promise<void>;
}

const gpus = new Map<string, GPU>();

/**
 * Opens the CPU adapter (Mesa llvmpipe through Dawn's OpenGL backend) or, with
 * backend 'default', whatever Dawn picks. Throws when no adapter is found: GPU tests must fail,
 * not skip.
 */
export async function createTestDevice(backend: 'opengl' | 'default' = 'opengl'): Promise<TestDevice> {
  process.env.EGL_PLATFORM ??= 'surfaceless';
  Object.assign(globalThis, globals);
  let gpu = gpus.get(backend);
  if (!gpu) gpus.set(backend, (gpu = create(backend === 'opengl' ? ['backend=opengl'] : [])));
  const adapter = await gpu.requestAdapter(backend === 'opengl' ? { featureLevel: 'compatibility' } : undefined);
  if (!adapter)
    throw new Error(`no WebGPU adapter (backend ${backend}); install libegl1 libegl-mesa0 libgl1-mesa-dri libgles2 and set EGL_PLATFORM=surfaceless`);
  const device = await adapter.requestDevice({
    requiredLimits: {
      maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
      maxBufferSize: adapter.limits.maxBufferSize,
      maxStorageBuffersPerShaderStage: adapter.limits.maxStorageBuffersPerShaderStage,
    },
  });
  const info = adapter.info;
  const name = [info?.vendor, info?.architecture, info?.device, info?.description].filter(Boolean).join(' ') || 'unknown adapter';
  const destroy = async () => {
    device.destroy();
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([device.lost, new Promise((r) => (timer = setTimeout(r, 1000)))]);
    clearTimeout(timer);
  };
  return { device, adapter, name, destroy };
}
