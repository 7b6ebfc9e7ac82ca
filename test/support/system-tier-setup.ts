/**
 * Global set-up of the system tier: refuse to start, naming each missing tool and how to get it.
 */
import { missingSystemTools } from './system-tools.js';

export default async function checkSystemTools(): Promise<void> {
  const missing = await missingSystemTools();
  if (missing.length > 0) {
    throw new Error(
      `npm run test:system needs tools this machine does not have:\n  - ${missing.join('\n  - ')}\n` +
        '(`npm test` needs none of them; .ci/run installs them all.)',
    );
  }
}
