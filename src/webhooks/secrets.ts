/**
 * Webhook signing secrets: made, shown once, stored so that the service can sign with them, and
 * never logged. This module guards them (docs/security.md, "Webhook secrets").
 *
 * A secret is 32 random bytes, shown to its owner as Standard Webhooks writes them:
 * `whsec_<base64>`. Stored, it is `plain:<base64>` without WEBHOOK_SECRET_KEY, and
 * `aes256gcm:<iv>:<tag>:<ciphertext>` (base64 each) with it: AES-256-GCM with a random 96-bit IV
 * per secret, the endpoint id as associated data (a stored secret copied to another endpoint does
 * not decrypt). The key is 32 bytes (src/config/config.ts reads it).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const SECRET_BYTES = 32;
const IV_BYTES = 12;
const SHOWN_PREFIX = 'whsec_';

/** A secret's bytes, which sign; `shown` is what its owner is given. */
export interface WebhookSecret {
  readonly bytes: Buffer;
  readonly shown: string;
}

export function newSecret(): WebhookSecret {
  const bytes = randomBytes(SECRET_BYTES);
  return { bytes, shown: `${SHOWN_PREFIX}${bytes.toString('base64')}` };
}

/** A stored secret could not be read back: encrypted with another key, or without the key now. */
export class SecretUnreadableError extends Error {
  constructor(reason: string) {
    super(`the webhook secret cannot be read: ${reason}`);
    this.name = 'SecretUnreadableError';
  }
}

/** How secrets are stored: encrypted when there is a key. */
export class SecretStore {
  constructor(private readonly key: Buffer | undefined) {}

  /** Whether stored secrets are encrypted. */
  get encrypts(): boolean {
    return this.key !== undefined;
  }

  seal(secret: WebhookSecret, endpointId: string): string {
    if (this.key === undefined) return `plain:${secret.bytes.toString('base64')}`;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(endpointId));
    const sealed = Buffer.concat([cipher.update(secret.bytes), cipher.final()]);
    return ['aes256gcm', iv, cipher.getAuthTag(), sealed]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64')))
      .join(':');
  }

  /** The bytes of a stored secret; SecretUnreadableError when they cannot be had. */
  open(stored: string, endpointId: string): Buffer {
    const [form, ...parts] = stored.split(':');
    if (form === 'plain' && parts.length === 1) return Buffer.from(parts[0] ?? '', 'base64');
    if (form !== 'aes256gcm' || parts.length !== 3) throw new SecretUnreadableError('unknown form');
    if (this.key === undefined) throw new SecretUnreadableError('it is encrypted and WEBHOOK_SECRET_KEY is not set');
    const [iv, tag, sealed] = parts.map((part) => Buffer.from(part ?? '', 'base64'));
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv ?? Buffer.alloc(0));
      decipher.setAAD(Buffer.from(endpointId));
      decipher.setAuthTag(tag ?? Buffer.alloc(0));
      return Buffer.concat([decipher.update(sealed ?? Buffer.alloc(0)), decipher.final()]);
    } catch {
      throw new SecretUnreadableError('WEBHOOK_SECRET_KEY is not the key it was encrypted with');
    }
  }
}
