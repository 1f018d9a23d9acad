// @vitest-environment jsdom
import { beforeEach, describe, expect, it } from 'vitest';
import { projectStore } from '../store/project.js';
import { emptyDocument } from '../document/documents.js';
import { autosave, autosavedText } from '../document/documents.js';
import { keepProject, storageStore } from './storage.js';

beforeEach(() => localStorage.clear());

describe('the autosave', () => {
  it('a project larger than the storage is not kept, the older copy goes, and the notice says so until one fits again', () => {
    const small = { ...emptyDocument(), name: 'small' };
    expect(autosave(small)).toEqual({ kept: true });
    expect(autosavedText()).toContain('"small"');
    // jsdom's storage holds 5,000,000 characters, as the browsers' local storage.
    const big = { ...emptyDocument(), name: 'big', description: 'x'.repeat(6_000_000) };
    expect(autosave(big)).toMatchObject({ kept: false, why: 'too large' });
    // A reload must not bring back "small" as if it were the project.
    expect(autosavedText()).toBeUndefined();

    projectStore.getState().load(big);
    keepProject();
    expect(storageStore.getState().notKept).toMatchObject({ why: 'too large' });
    projectStore.getState().load(small);
    keepProject();
    expect(storageStore.getState().notKept).toBeNull();
  });
});
