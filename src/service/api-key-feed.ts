/**
 * What the change feed tells the API keys: a created or revoked key empties the key cache (a
 * revoked key's open live-update streams end too; new requests are refused by the guard), and a
 * feed that was lost or comes back may have missed a revocation, so every open stream's key is
 * checked again.
 */
import type { ServiceDatabase } from '../loaders/loaders.js';
import type { Logger } from '../logging/logger.js';
import type { ApiKeyStore } from './api-keys.js';
import { describeFailure } from './errors.js';
import type { LiveUpdates } from './live-updates.js';
import { apiKeyClient, apiKeyIdOf } from './request.js';

type ChangeFeedHandlers = Parameters<ServiceDatabase['listenForChanges']>[0];

export function apiKeyFeedHandlers(apiKeys: ApiKeyStore, live: LiveUpdates, logger: Logger): ChangeFeedHandlers {
  const endStreamsIfRevoked = (keyId: string) => {
    apiKeys.isActive(keyId).then(
      (active) => {
        if (!active) live.endClient(apiKeyClient(keyId));
      },
      (error: unknown) =>
        logger.warn({ apiKey: keyId, reason: describeFailure(error) }, 'API key change: could not read the key'),
    );
  };
  return {
    onChange: () => {},
    onApiKeyChange: ({ keyId }) => {
      apiKeys.changed();
      endStreamsIfRevoked(keyId);
    },
    onLive: () => {
      apiKeys.changed();
      for (const client of live.openClients()) {
        const keyId = apiKeyIdOf(client);
        if (keyId !== undefined) endStreamsIfRevoked(keyId);
      }
    },
    onLost: () => {
      apiKeys.changed();
    },
  };
}
