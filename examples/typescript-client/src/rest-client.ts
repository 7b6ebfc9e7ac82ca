/**
 * The REST API, typed from its OpenAPI document: openapi-typescript wrote src/generated/rest.ts
 * from openapi.json, and openapi-fetch checks each path, parameter and answer against it.
 */
import createClient from 'openapi-fetch';
import type { paths } from './generated/rest.js';
import { authorization, type Settings } from './settings.js';

export function restClient(settings: Settings) {
  return createClient<paths>({ baseUrl: settings.serviceUrl, headers: authorization(settings) });
}
