/**
 * An OTLP/HTTP trace receiver for tests: a node:http server on a free loopback port that keeps
 * every export it is sent. Exports in the JSON protocol (`http/json`) are decoded into spans;
 * protobuf ones (`http/protobuf`) are kept as bytes, which still show span names and attribute
 * values as plain UTF-8.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The span kinds of OTLP (SpanKind in trace.proto). */
export const OTLP_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 } as const;

type AttributeValue = string | number | boolean;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty or undefined for a root span. */
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, AttributeValue>;
  status: { code?: number } | undefined;
  /** The resource's attributes (service.name …). */
  resource: Record<string, AttributeValue>;
}

interface ReceivedExport {
  path: string;
  contentType: string;
  body: Buffer;
}

export interface OtlpReceiver {
  /** Base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  exports: ReceivedExport[];
  /** The spans of every JSON export so far. */
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

interface OtlpKeyValue {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
}

interface OtlpJsonExport {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: OtlpKeyValue[];
        status?: { code?: number };
      }>;
    }>;
  }>;
}

function attributesOf(list: OtlpKeyValue[] | undefined): Record<string, AttributeValue> {
  const attributes: Record<string, AttributeValue> = {};
  for (const { key, value } of list ?? []) {
    const scalar = value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue;
    if (scalar !== undefined)
      attributes[key] = typeof scalar === 'string' && 'intValue' in value ? Number(scalar) : scalar;
  }
  return attributes;
}

function spansOf(exported: OtlpJsonExport): ReceivedSpan[] {
  return (exported.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId === '' ? undefined : span.parentSpanId,
        name: span.name,
        kind: span.kind,
        attributes: attributesOf(span.attributes),
        status: span.status,
        resource,
      })),
    );
  });
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const exports: ReceivedExport[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const contentType = req.headers['content-type'] ?? '';
      exports.push({ path: req.url ?? '', contentType, body: Buffer.concat(chunks) });
      // An empty ExportTraceServiceResponse in the request's own encoding: everything accepted.
      if (contentType.startsWith('application/json')) {
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      } else {
        res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exports,
    spans: () =>
      exports
        .filter((exported) => exported.contentType.startsWith('application/json'))
        .flatMap((exported) => spansOf(JSON.parse(exported.body.toString('utf8')) as OtlpJsonExport)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
