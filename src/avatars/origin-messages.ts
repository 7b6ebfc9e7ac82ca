/** What the service and its origin process (./origin-process.ts, ./origin-child.ts) say to each other. */
import type { Network } from '../config/networks.js';
import type { OutputFormat } from './image-resize.js';
import type { ImageOutcome, OriginImagesOptions, VariantRequest } from './origin-images.js';

/** The origin process's settings: OriginImagesOptions that can be copied to another process. */
export type OriginProcessSettings = Omit<OriginImagesOptions, 'policy' | 'observer' | 'resolve'> & {
  /** The address policy's allowed networks; the origin process makes the policy again from them. */
  allowed: readonly Network[];
  /** Whether the process lowers itself to idle priority (OriginProcessOptions). */
  idlePriority: boolean;
};

/** The origin process's settings are its one argument, as JSON; then the service sends: */
export type ServiceMessage =
  /** Make this variant. */
  | { kind: 'job'; id: number; request: VariantRequest }
  /** Finish what is being made, then end. */
  | { kind: 'stop' };

/** An error of the origin process: enough to make it again as the class it was. */
export interface ErrorReport {
  name: string;
  message: string;
  failure: string | undefined;
}

export type OriginMessage =
  /** `job` is the job whose variant needs this fetch. */
  | { kind: 'fetch-started'; job: number; fetch: number; host: string }
  | { kind: 'fetch-ended'; fetch: number; outcome: ImageOutcome; bytes: number; seconds: number }
  | { kind: 'resized'; seconds: number }
  | { kind: 'made'; job: number; body: Uint8Array; format: OutputFormat }
  | { kind: 'failed'; job: number; error: ErrorReport };
