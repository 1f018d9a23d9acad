// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';
import { MAX_DOCUMENT_BYTES } from '@pipeloom/core';
import { projectStore } from '../store/project.js';
import { loadingStore, openDocument } from './loading.js';

describe('opening a document', () => {
  it("a file over core's limit is refused before it is read, naming it, its size and the limit", async () => {
    let read = false;
    const placed = await openDocument(
      'huge.json',
      MAX_DOCUMENT_BYTES + 1,
      () => {
        read = true;
        return '{}';
      },
      () => {
        throw new Error('not placed');
      },
    );
    expect(placed).toBe(false);
    expect(read).toBe(false);
    expect(projectStore.getState().toasts.at(-1)).toMatchObject({
      kind: 'error',
      message: `Cannot open huge.json: it is ${MAX_DOCUMENT_BYTES + 1} bytes (64.0 MiB), more than the designer's limit of ${MAX_DOCUMENT_BYTES} bytes (64 MiB); split the project into smaller documents`,
    });
    expect(loadingStore.getState().loading).toBeNull();
  });

  it('a malformed one is named in a toast, and the progress goes', async () => {
    const placed = await openDocument(
      'bad.json',
      5,
      () => '{bad',
      () => {
        throw new Error('not placed');
      },
    );
    expect(placed).toBe(false);
    expect(projectStore.getState().toasts.at(-1)?.message).toMatch(/^Cannot open bad\.json: line 1, column 2: malformed JSON/);
    expect(loadingStore.getState().loading).toBeNull();
  });
});
