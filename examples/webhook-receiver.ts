/**
 * A webhook receiver in Node, verifying every delivery with the standardwebhooks library
 * (`npm install standardwebhooks`): what docs/webhooks.md shows, and what the service's tests run.
 *
 *   WEBHOOK_SECRET=whsec_… PORT=8080 node --experimental-strip-types examples/webhook-receiver.ts
 *
 * (Node 24 needs no flag; with tsx: `npx tsx examples/webhook-receiver.ts`.) A delivery that does
 * not verify is answered 400 and not handled. Deliveries come at least once: the same
 * `webhook-id` may come again after a timeout or a restart, so ids already handled are answered
 * 2xx and skipped. Answer fast (2xx within WEBHOOK_TIMEOUT_MS, 15 s by default) and do slow work
 * afterwards.
 */
import http from 'node:http';
import { Webhook } from 'standardwebhooks';

/** One change, as the service sends it (`profile` absent for `profile.removed`). */
export interface ProfileEvent {
  /** The delivery's `webhook-id`: the same on every retry of one event. */
  id: string;
  type: 'profile.created' | 'profile.updated' | 'profile.removed';
  /** When the change was committed. */
  timestamp: string;
  data: { name: string; cursor: string; profile?: Record<string, unknown> };
}

/** A server that verifies each delivery with `secret` and hands the verified ones to `handle`. */
export function createReceiver(secret: string, handle: (event: ProfileEvent) => void | Promise<void>): http.Server {
  const webhook = new Webhook(secret);
  // Kept in memory for the example; a real receiver keeps the ids it handled where it keeps what
  // it did with them, in the same transaction.
  const handled = new Set<string>();
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = {
        'webhook-id': String(req.headers['webhook-id'] ?? ''),
        'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
      };
      let verified: Omit<ProfileEvent, 'id'>;
      try {
        // Checks the signature and that the timestamp is within five minutes of now.
        verified = webhook.verify(body, headers) as Omit<ProfileEvent, 'id'>;
      } catch {
        res.writeHead(400).end();
        return;
      }
      const id = headers['webhook-id'];
      if (!handled.has(id)) {
        try {
          await handle({ id, ...verified });
        } catch {
          // Not handled: a 5xx makes the service try again later, with the same id.
          res.writeHead(500).end();
          return;
        }
        handled.add(id);
      }
      res.writeHead(204).end();
    });
  });
}

// Run as a program: print each change.
if (import.meta.url === `file://${process.argv[1]}`) {
  const secret = process.env.WEBHOOK_SECRET ?? '';
  const port = Number(process.env.PORT ?? 8080);
  createReceiver(secret, (event) => {
    console.log(event.type, event.data.name, event.data.cursor);
  }).listen(port, () => console.log(`receiving webhooks on port ${port}`));
}
