import { createStore, useStore } from 'zustand';

// The buffer node picked in the IG view. Buffers are compiler output, not document records,
// so this lives beside the view rather than in the project's selection.
export const igSelection = createStore<{ buffer: string | null }>()(() => ({ buffer: null }));
export const usePickedBuffer = () => useStore(igSelection, (s) => s.buffer);
