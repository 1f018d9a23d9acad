// @vitest-environment jsdom
import { beforeEach, describe, expect, it } from 'vitest';
import { emptyDocument } from '../document/documents.js';
import { readRecent, RECENT_DOC_MAX_CHARS, RECENT_MAX, recentProjects, rememberProject } from './recent.js';
import type { WrittenDocument } from '@pipeloom/core';

const project = (name: string, nodes = 1): WrittenDocument => ({
  ...emptyDocument(),
  name,
  app: { nodes: Array.from({ length: nodes }, (_, i) => ({ id: `p${i}`, kernel: 'matrix.produce', params: { width: 8, height: 8 } })), edges: [] },
});

beforeEach(() => localStorage.clear());

describe('recent projects', () => {
  it('the project left last comes first, and reads back as the same document', () => {
    rememberProject(project('a'), 1);
    rememberProject(project('b', 2), 2);
    const list = recentProjects();
    expect(list.map((e) => [e.name, e.nodes, e.savedAt])).toEqual([
      ['b', 2, 2],
      ['a', 1, 1],
    ]);
    expect(readRecent(list[1]).doc?.app.nodes.map((n) => n.id)).toEqual(['p0']);
  });

  it('an identical copy moves to the top instead of being listed twice', () => {
    rememberProject(project('a'), 1);
    rememberProject(project('b'), 2);
    rememberProject(project('a'), 3);
    expect(recentProjects().map((e) => e.name)).toEqual(['a', 'b']);
  });

  it(`keeps at most ${RECENT_MAX}, dropping the oldest`, () => {
    for (let i = 0; i < RECENT_MAX + 3; i++) rememberProject(project(`p${i}`), i);
    const names = recentProjects().map((e) => e.name);
    expect(names).toHaveLength(RECENT_MAX);
    expect(names[0]).toBe(`p${RECENT_MAX + 2}`);
    expect(names).not.toContain('p0');
  });

  it('an empty untitled project is not kept, nor one above the size bound', () => {
    expect(rememberProject(emptyDocument())).toBe('blank');
    const big = project('big', 1);
    big.description = 'x'.repeat(RECENT_DOC_MAX_CHARS);
    expect(rememberProject(big)).toBe('too large');
    expect(recentProjects()).toEqual([]);
  });

  it('a damaged list is ignored, and an entry that no longer parses says why', () => {
    localStorage.setItem('pipeloom.recent.v1', '{not json');
    expect(recentProjects()).toEqual([]);
    localStorage.setItem('pipeloom.recent.v1', JSON.stringify([{ name: 'x', savedAt: 1, nodes: 0, text: '{"format":"pipeloom/v9"}' }, { bogus: true }]));
    const list = recentProjects();
    expect(list).toHaveLength(1);
    expect(readRecent(list[0]).error).toMatch(/format/);
  });
});
