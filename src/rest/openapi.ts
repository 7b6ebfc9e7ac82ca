/**
 * The OpenAPI 3.1 description of the REST surface, served at /api/openapi.json. Tests validate
 * real answers of every documented status against these schemas, so it cannot drift from the code.
 */
import { INVALID_NAME_MESSAGE } from '../names/name-id.js';
import { discoveryPaths, discoverySchemas } from './openapi-discovery.js';

const errorBody = (example: string) => ({
  description: example,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, example: { error: example } } },
});

const rateLimitHeaders = {
  'RateLimit-Limit': { $ref: '#/components/headers/RateLimit-Limit' },
  'RateLimit-Remaining': { $ref: '#/components/headers/RateLimit-Remaining' },
  'RateLimit-Reset': { $ref: '#/components/headers/RateLimit-Reset' },
};

const retryAfter = { 'Retry-After': { $ref: '#/components/headers/Retry-After' } };

export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Name profile service (REST)',
      version: '1.0.0',
      description:
        'Public profile of a name ID and an ownership check. The same data is available, field by field, at /graphql.',
    },
    paths: {
      '/api/owner-check': {
        get: {
          operationId: 'ownerCheck',
          summary: 'Whether an e-mail owns the namespace of a name ID or created it',
          parameters: [
            { name: 'email', in: 'query', required: true, schema: { type: 'string', maxLength: 254 } },
            { name: 'name', in: 'query', required: true, schema: { type: 'string' }, example: 'demo@me' },
          ],
          responses: {
            '200': {
              description: 'The check was made.',
              headers: { ...rateLimitHeaders },
              content: { 'application/json': { schema: { $ref: '#/components/schemas/OwnerCheckResult' } } },
            },
            '400': errorBody('Both email and name parameters are required'),
            '429': {
              ...errorBody('Too many requests, retry in 42 seconds'),
              headers: { ...rateLimitHeaders, ...retryAfter },
            },
            '500': errorBody('Internal server error'),
            '503': { ...errorBody('Service unavailable'), headers: retryAfter },
          },
        },
      },
      ...discoveryPaths({ errorBody, rateLimitHeaders, retryAfter }),
      '/api/{name_id}': {
        get: {
          operationId: 'profile',
          summary: 'The public profile of a name ID',
          parameters: [
            {
              name: 'name_id',
              in: 'path',
              required: true,
              description: 'A name ID `<local>@<domain>`, case-insensitive, optionally percent-encoded.',
              schema: { type: 'string', maxLength: 1024 },
              example: 'demo@me',
            },
          ],
          responses: {
            '200': {
              description: 'The profile.',
              headers: {
                ETag: { schema: { type: 'string' }, description: 'Strong validator of the profile content.' },
                'Cache-Control': { schema: { type: 'string' }, example: 'public, max-age=60' },
              },
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Profile' } } },
            },
            '304': { description: 'Not modified: `If-None-Match` matched the current ETag.' },
            '400': errorBody(INVALID_NAME_MESSAGE),
            '404': errorBody('Profile not found'),
            '405': errorBody('Method not allowed'),
            '429': {
              ...errorBody('Too many requests, retry in 42 seconds'),
              headers: { ...rateLimitHeaders, ...retryAfter },
            },
            '500': errorBody('Internal server error'),
            '503': { ...errorBody('Service unavailable'), headers: retryAfter },
          },
        },
      },
    },
    components: {
      schemas: {
        Profile: {
          type: 'object',
          required: ['name', 'description', 'image', 'attributes', 'records'],
          additionalProperties: false,
          properties: {
            name: { type: 'string', description: 'Canonical name ID (NFC, lower case).' },
            description: { type: 'string' },
            image: { type: 'string', description: 'Avatar URL; empty when unset.' },
            attributes: { type: 'array', items: { $ref: '#/components/schemas/Attribute' }, minItems: 3, maxItems: 3 },
            records: {
              type: 'object',
              description: 'Records by numeric key. Locate a record by its `type`, not by its key.',
              propertyNames: { pattern: '^(0|[1-9][0-9]*)$' },
              additionalProperties: { $ref: '#/components/schemas/Record' },
            },
          },
        },
        Attribute: {
          type: 'object',
          required: ['trait_type', 'value'],
          additionalProperties: false,
          properties: {
            trait_type: { type: 'string', enum: ['domain', 'level', 'length'] },
            value: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
          },
        },
        Record: {
          type: 'object',
          required: ['type', 'value'],
          additionalProperties: false,
          properties: {
            type: { type: 'string', examples: ['name', 'email', 'website', 'phone', 'social', 'crypto'] },
            value: {
              oneOf: [{ type: 'string' }, { type: 'object', additionalProperties: { type: 'string' } }],
            },
          },
        },
        OwnerCheckResult: {
          type: 'object',
          required: ['hasCreated', 'email', 'name'],
          additionalProperties: false,
          properties: {
            hasCreated: { type: 'boolean' },
            email: { type: 'string', description: 'The e-mail as given, trimmed.' },
            name: { type: 'string', description: 'The name ID as given, trimmed.' },
          },
        },
        ...discoverySchemas,
        Error: {
          type: 'object',
          required: ['error'],
          additionalProperties: false,
          properties: { error: { type: 'string' } },
        },
      },
      headers: {
        'RateLimit-Limit': { schema: { type: 'integer' }, description: 'Requests allowed per window.' },
        'RateLimit-Remaining': { schema: { type: 'integer' }, description: 'Requests left in this window.' },
        'RateLimit-Reset': { schema: { type: 'integer' }, description: 'Seconds until the window resets.' },
        'Retry-After': { schema: { type: 'integer' }, description: 'Seconds to wait before retrying.' },
      },
    },
  };
}
