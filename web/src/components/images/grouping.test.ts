import { describe, expect, it } from 'vitest';
import type { ImageSummary } from '../../lib/api-images';
import { countContainers, filterRows, findImage, groupRows, imageRows, tagsOf } from './grouping';

const list: ImageSummary[] = [
  { Id: 'sha256:aaa111', RepoTags: ['nginx:1.27', 'nginx:latest'], Created: 300, Size: 100, Containers: -1 },
  { Id: 'sha256:bbb222', RepoTags: ['nginx:1.25'], Created: 100, Size: 90, Containers: -1 },
  { Id: 'sha256:ccc333', RepoTags: ['<none>:<none>'], RepoDigests: ['<none>@<none>'], Created: 50, Size: 10, Containers: -1 },
  { Id: 'sha256:ddd444', RepoTags: [], RepoDigests: ['127.0.0.1:5000/app@sha256:feed'], Created: 60, Size: 20, Containers: 2 },
  { Id: 'sha256:eee555', RepoTags: ['127.0.0.1:5000/team/app:2'], Created: 70, Size: 30 },
];

describe('image grouping', () => {
  it('makes a row per name, dangling images one <none> row', () => {
    const rows = imageRows(list, countContainers([{ id: 'c1', imageId: 'sha256:aaa111' }, { id: 'c2', imageId: 'sha256:aaa111' }]));
    expect(rows.map((r) => [r.repo, r.tag, r.ref, r.dangling, r.inUse])).toEqual([
      ['nginx', '1.27', 'nginx:1.27', false, 2],
      ['nginx', 'latest', 'nginx:latest', false, 2],
      ['nginx', '1.25', 'nginx:1.25', false, 0],
      ['<none>', '<none>', 'sha256:ccc333', true, 0],
      ['127.0.0.1:5000/app', '<none>', 'sha256:ddd444', true, 2], // the engine's own count wins
      ['127.0.0.1:5000/team/app', '2', '127.0.0.1:5000/team/app:2', false, 0],
    ]);
    expect(imageRows(list)[0].inUse).toBeNull(); // neither counted nor known
  });

  it('groups the tags of a repository, repositories by name and <none> last, newest first inside', () => {
    const groups = groupRows(imageRows(list));
    expect(groups.map((g) => g.repo)).toEqual(['127.0.0.1:5000/app', '127.0.0.1:5000/team/app', 'nginx', '<none>']);
    expect(groups[2].rows.map((r) => r.tag)).toEqual(['1.27', 'latest', '1.25']);
  });

  it('filters by every word: name, id, dangling, use', () => {
    const rows = imageRows(list, countContainers([{ id: 'c', imageId: 'sha256:bbb222' }]));
    expect(filterRows(rows, 'nginx 1.2').map((r) => r.ref)).toEqual(['nginx:1.27', 'nginx:1.25']);
    expect(filterRows(rows, 'dangling').map((r) => r.ref)).toEqual(['sha256:ccc333', 'sha256:ddd444']);
    expect(filterRows(rows, 'in-use').map((r) => r.ref)).toEqual(['nginx:1.25', 'sha256:ddd444']);
    expect(filterRows(rows, 'eee5').map((r) => r.ref)).toEqual(['127.0.0.1:5000/team/app:2']);
    expect(filterRows(rows, '  ')).toHaveLength(rows.length);
  });

  it('finds an image by id, short id or name', () => {
    expect(findImage(list, 'sha256:bbb222')?.Id).toBe('sha256:bbb222');
    expect(findImage(list, 'bbb222')?.Id).toBe('sha256:bbb222');
    expect(findImage(list, 'nginx')?.Id).toBe('sha256:aaa111');
    expect(findImage(list, '127.0.0.1:5000/team/app:2')?.Id).toBe('sha256:eee555');
    expect(findImage(list, 'nope')).toBeUndefined();
    expect(tagsOf(list[2])).toEqual([]);
  });
});
