/**
 * The import's progress line on stderr. With the size of the input known (a file, or standard
 * input redirected from one) it shows how far the import is and about how long it still needs;
 * otherwise (a pipe) the lines read and the rate.
 */

export interface ProgressPoint {
  lines: number;
  elapsedMs: number;
  /** Bytes of the input consumed so far. */
  bytesRead: number;
  /** Size of the whole input, when known. */
  totalBytes: number | undefined;
}

export function formatProgress({ lines, elapsedMs, bytesRead, totalBytes }: ProgressPoint): string {
  const seconds = Math.max(elapsedMs, 1) / 1000;
  const rate = `${count(Math.round(lines / seconds))} lines/s`;
  if (totalBytes === undefined || totalBytes <= 0 || bytesRead <= 0) return `... ${count(lines)} lines, ${rate}`;
  const done = Math.min(bytesRead / totalBytes, 1);
  const left = (seconds * (1 - done)) / done;
  return (
    `... ${Math.floor(done * 100)}% of ${megabytes(totalBytes)}, ${count(lines)} lines, ${rate}, ` +
    `about ${duration(left)} left`
  );
}

function count(value: number): string {
  return value.toLocaleString('en-US');
}

function megabytes(bytes: number): string {
  const mb = bytes / 1_000_000;
  return `${mb < 10 ? mb.toFixed(1) : count(Math.round(mb))} MB`;
}

/** Whole seconds below a minute, minutes and seconds above. */
function duration(seconds: number): string {
  const whole = Math.ceil(seconds);
  if (whole < 60) return `${whole} s`;
  const minutes = `${Math.floor(whole / 60)} min`;
  return whole % 60 === 0 ? minutes : `${minutes} ${whole % 60} s`;
}
