/**
 * Standard Webhooks signatures (spec v1, symmetric): `v1,<base64 HMAC-SHA256>` of
 * `<webhook-id>.<webhook-timestamp>.<body>` with the secret's bytes as the key. While a rotated
 * secret still signs, the header carries one signature per secret, separated by spaces, the
 * current one first: a receiver that knows either accepts.
 */
import { createHmac } from 'node:crypto';

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

function signatureOf(secret: Buffer, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

export function signedHeaders(
  secrets: readonly Buffer[],
  id: string,
  timestampSeconds: number,
  body: string,
): SignedHeaders {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((secret) => signatureOf(secret, id, timestampSeconds, body)).join(' '),
  };
}
