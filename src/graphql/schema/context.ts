/**
 * What every resolver gets: the profiles service and the request it answers. Resolvers are thin
 * callers of the service, exactly like the REST handlers.
 */
import type { AvatarService } from '../../service/avatars.js';
import type { LiveUpdates } from '../../service/live-updates.js';
import type { ProfilesService } from '../../service/profiles-service.js';
import type { ServiceRequest } from '../../service/request.js';

/** The client connection a subscription streams over: how far behind it is, and how to cut it. */
export interface StreamConnection {
  readonly transport: 'sse' | 'websocket';
  /** Bytes written for the client and not yet taken by it (user space and the socket's buffer). */
  backlog(): number;
  /** Cuts the connection: a client that does not read is dropped, not buffered for. */
  drop(): void;
}

export interface GraphQLContext {
  profiles: ProfilesService;
  /** Avatar URLs (`Profile.avatarUrl`), built from PUBLIC_URL. */
  avatars: AvatarService;
  /** Live-update subscriptions (`profileChanged`). */
  live: LiveUpdates;
  /** Not `request`: Yoga's context already has the HTTP request under that name. */
  serviceRequest: ServiceRequest;
  /** Undefined without a Node connection (tests calling `yoga.fetch`). */
  connection: StreamConnection | undefined;
}
