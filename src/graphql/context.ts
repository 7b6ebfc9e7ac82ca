/**
 * What every resolver gets: the profiles service and the request it answers. Resolvers are thin
 * callers of the service, exactly like the REST handlers.
 */
import type { AvatarService } from '../service/avatars.js';
import type { ProfilesService } from '../service/profiles-service.js';
import type { ServiceRequest } from '../service/request.js';

export interface GraphQLContext {
  profiles: ProfilesService;
  /** Avatar URLs (`Profile.avatarUrl`), built from PUBLIC_URL. */
  avatars: AvatarService;
  /** Not `request`: Yoga's context already has the HTTP request under that name. */
  serviceRequest: ServiceRequest;
}
