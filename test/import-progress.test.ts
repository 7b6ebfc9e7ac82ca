import { describe, expect, it } from 'vitest';
import { formatProgress } from '../src/cli/import-progress.js';

describe('the import progress line', () => {
  it('shows the share done and the time left when the size of the input is known', () => {
    const line = formatProgress({ lines: 250_000, elapsedMs: 20_000, bytesRead: 170_000_000, totalBytes: 680_000_000 });
    expect(line).toBe('... 25% of 680 MB, 250,000 lines, 12,500 lines/s, about 1 min left');
    expect(formatProgress({ lines: 100_000, elapsedMs: 10_000, bytesRead: 10, totalBytes: 100 })).toContain(
      'about 1 min 30 s left',
    );
    expect(formatProgress({ lines: 900, elapsedMs: 9_000, bytesRead: 9_000_000, totalBytes: 10_000_000 })).toBe(
      '... 90% of 10 MB, 900 lines, 100 lines/s, about 1 s left',
    );
  });

  it('shows lines and rate when the size is not known (a pipe)', () => {
    expect(formatProgress({ lines: 40_960, elapsedMs: 4_000, bytesRead: 30_000_000, totalBytes: undefined })).toBe(
      '... 40,960 lines, 10,240 lines/s',
    );
  });
});
