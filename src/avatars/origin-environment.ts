/**
 * What the avatar origin process (./origin-process.ts) is given of the service's environment. It
 * is the part of the service that handles bytes from anywhere: libvips decodes images an
 * attacker chose. So it gets only what the fetch and the decoding need, and none of the
 * service's secrets (DATABASE_URL and its password, REDIS_URL, OTLP headers, purge tokens) nor
 * its Node options (an agent loaded with `--require` belongs to the service, not to this child).
 * Its settings are its one argument instead (JSON: timeouts, bounds, the allowed networks).
 */

/** Passed as they are: where programs are (`chrt`), trust for https origins, locale, time zone, temporary files. */
const PASSED = new Set([
  'PATH',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'TZ',
  'LANG',
  'LC_ALL',
  'TMPDIR',
]);
/** libvips' own settings (VIPS_WARNING, VIPS_CONCURRENCY and the like). */
const PASSED_PREFIX = 'VIPS_';

export function originEnvironment(service: NodeJS.ProcessEnv): Record<string, string> {
  const passed: Record<string, string> = {};
  for (const [name, value] of Object.entries(service)) {
    if (value !== undefined && (PASSED.has(name) || name.startsWith(PASSED_PREFIX))) passed[name] = value;
  }
  return passed;
}
