import { describe, expect, it } from 'vitest';
import { type QualityFigures, qualityLines, readQualityFigures } from '../../src/blocks/figures.js';
import type { PullRequestSummary } from '../../src/store/types.js';

const pr = (fields: Partial<PullRequestSummary> = {}): PullRequestSummary => ({
  projectId: null,
  opened: 4,
  merged: 2,
  closedUnmerged: 1,
  stillOpen: 1,
  medianMergeMs: 3 * 3_600_000,
  ...fields,
});

const figures = (fields: Partial<QualityFigures> = {}): QualityFigures => ({
  feedback: { positive: 5, negative: 2, reasons: 1 },
  pullRequests: [],
  defaultProject: 'proj_docs',
  following: true,
  ...fields,
});

describe('qualityLines', () => {
  it('says per project, busiest first, what became of the pull requests opened, then the feedback', () => {
    expect(
      qualityLines(
        figures({ pullRequests: [pr(), pr({ projectId: 'proj_api', opened: 9, medianMergeMs: null })] }),
      ),
    ).toEqual([
      '`proj_api`: 9 pull requests opened · 2 merged · 1 closed unmerged · 1 still open',
      '`proj_docs`: 4 pull requests opened · 2 merged · 1 closed unmerged · 1 still open · median time to merge 3 hours',
      'Feedback on outcomes: :thumbsup: 5  :thumbsdown: 2 (1 said what to fix)',
    ]);
  });

  it('adds up the default project’s rows recorded with and without its id, never inventing a median', () => {
    const [line] = qualityLines(
      figures({
        pullRequests: [
          pr({ opened: 1, merged: 1, stillOpen: 0, closedUnmerged: 0 }),
          pr({ projectId: 'proj_docs' }),
        ],
      }),
    );
    expect(line).toBe('`proj_docs`: 5 pull requests opened · 3 merged · 1 closed unmerged · 1 still open');
    const [one] = qualityLines(
      figures({ pullRequests: [pr({ medianMergeMs: null }), pr({ projectId: 'proj_docs' })] }),
    );
    expect(one).toContain('median time to merge 3 hours');
  });

  it('without following, counts what was opened and says the rest is not followed', () => {
    expect(qualityLines(figures({ following: false, pullRequests: [pr({ opened: 1 })] }))).toEqual([
      '`proj_docs`: 1 pull request opened',
      '_Pull requests are not followed to their merge: set GITHUB_TOKEN to follow them._',
      'Feedback on outcomes: :thumbsup: 5  :thumbsdown: 2 (1 said what to fix)',
    ]);
    expect(qualityLines(figures())[0]).toBe('No pull requests opened yet.');
  });

  it('shows a project id inert', () => {
    expect(qualityLines(figures({ pullRequests: [pr({ projectId: '<!channel>' })] }))[0]).toMatch(
      /^`&lt;!channel&gt;`: /,
    );
  });
});

describe('readQualityFigures', () => {
  it('reads the totals and the summaries from the store', async () => {
    const store = {
      feedbackTotals: async () => ({ positive: 1, negative: 0, reasons: 0 }),
      pullRequestSummaries: async () => [pr()],
    };
    expect(await readQualityFigures({ store, defaultProject: 'proj_docs', following: false })).toEqual({
      feedback: { positive: 1, negative: 0, reasons: 0 },
      pullRequests: [pr()],
      defaultProject: 'proj_docs',
      following: false,
    });
  });
});
