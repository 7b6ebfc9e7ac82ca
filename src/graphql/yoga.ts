/**
 * The `/graphql` endpoint: GraphQL over HTTP (GET and POST) with GraphiQL for browsers, on the
 * schema and per-request context that the REST shim uses too.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import { GRAPHQL_BATCHING, graphqlLimitPlugins } from '../limits/graphql-armor.js';
import { createRequestContext, type GraphQLServices, type RequestContext } from './context.js';
import { maskError } from './errors.js';
import { renderGraphiQL } from './graphiql.js';
import { GRAPHIQL_EXAMPLE_QUERY } from './graphiql-example.js';
import { contextForNodeRequest, UNKNOWN_CLIENT_IP } from './node-context.js';
import { schema } from './schema.js';
import { yogaLogger } from './yoga-logger.js';

export { createRequestContext } from './context.js';
export { contextForNodeRequest } from './node-context.js';
export { schema } from './schema.js';

export const GRAPHQL_ENDPOINT = '/graphql';

/** What the Node adapter hands Yoga with each request; absent when a test calls `yoga.fetch`. */
export interface NodeServerContext {
  req?: IncomingMessage;
  res?: ServerResponse;
}

export type GraphQLServer = YogaServerInstance<NodeServerContext, RequestContext>;

export interface GraphQLServerOptions {
  /** Extra Yoga plugins, after the query limits of src/limits/graphql-armor.ts (always on). */
  plugins?: Plugin[];
}

export function createGraphQLServer(services: GraphQLServices, options: GraphQLServerOptions = {}): GraphQLServer {
  const { config, logger } = services;
  return createYoga<NodeServerContext, RequestContext>({
    schema,
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    landingPage: false,
    graphiql: { title: 'Name profiles: GraphQL', defaultQuery: GRAPHIQL_EXAMPLE_QUERY },
    // Served from this process (no CDN); see ./graphiql.ts.
    renderGraphiQL,
    batching: GRAPHQL_BATCHING,
    logging: yogaLogger(logger),
    maskedErrors: {
      maskError: (error) => maskError(error, { production: config.production }),
      isDev: !config.production,
    },
    plugins: [...graphqlLimitPlugins({ hideFieldSuggestions: config.production }), ...(options.plugins ?? [])],
    context: ({ req, res }) =>
      req === undefined
        ? createRequestContext(services, { clientIp: UNKNOWN_CLIENT_IP, requestId: crypto.randomUUID() })
        : contextForNodeRequest(services, req, res),
  });
}
