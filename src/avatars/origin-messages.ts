/** What the event loop and the origin thread (./origin-thread.ts, ./origin-worker.ts) say to each other. */
import type { Network } from './address-policy.js';
import type { OutputFormat } from './image-resize.js';
import type { ImageOutcome, OriginImagesOptions, VariantRequest } from './origin-images.js';

/** The origin thread's settings: OriginImagesOptions that can be copied to another thread. */
export type OriginThreadSettings = Omit<OriginImagesOptions, 'policy' | 'observer' | 'resolve'> & {
  /** The address policy's allowed networks; the thread makes the policy again from them. */
  allowed: readonly Network[];
};

/** Make this variant. */
export interface OriginJob {
  id: number;
  request: VariantRequest;
}

/** An error of the origin thread: enough to make it again as the class it was. */
export interface ErrorReport {
  name: string;
  message: string;
  failure: string | undefined;
}

export type WorkerMessage =
  /** `job` is the job whose variant needs this fetch. */
  | { kind: 'fetch-started'; job: number; fetch: number; host: string }
  | { kind: 'fetch-ended'; fetch: number; outcome: ImageOutcome; bytes: number }
  | { kind: 'resized'; seconds: number }
  | { kind: 'made'; job: number; body: Uint8Array; format: OutputFormat }
  | { kind: 'failed'; job: number; error: ErrorReport };
