/**
 * A fake AWS (plain HTTP on 127.0.0.1) for the connector's SDK v3 clients
 * pointed at it with `endpoint`: one server for every service, routed by the
 * service named in the SigV4 credential scope, each answering in its real
 * wire protocol (query/XML for STS and Auto Scaling, EC2 query/XML, JSON 1.1
 * for ECS and CloudTrail, JSON 1.0 for CloudWatch, REST-JSON for Lambda).
 * Every request must carry a SigV4 `authorization` whose signature verifies
 * with the key's secret, and `x-amz-date`; otherwise 403 in the service's own
 * error format.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cloudtrail, cloudwatch, ecs, lambda } from './json-services.js';
import { autoscaling, ec2, sts } from './query-services.js';
import { expectedSignature, parseAuthorization } from './sigv4.js';
import type { FakeAwsState } from './state.js';
import { sendError, type Protocol } from './wire.js';

export interface FakeAwsRequest {
  readonly service: string | null;
  readonly region: string | null;
  readonly accessKeyId: string | null;
  /** the query `Action`, the JSON operation, or `METHOD path` for Lambda */
  readonly operation: string;
  readonly contentType: string | undefined;
  readonly target: string | undefined;
  readonly status: number;
  /** the form (query protocols) or the JSON input, as received */
  readonly input: unknown;
}

export interface FakeAws {
  readonly url: string;
  readonly state: FakeAwsState;
  readonly requests: FakeAwsRequest[];
  /** what write calls did: `ec2:RebootInstances us-east-1 i-...` */
  readonly effects: string[];
  close(): Promise<void>;
}

const PROTOCOLS: Record<string, Protocol> = {
  sts: 'query',
  autoscaling: 'query',
  ec2: 'ec2',
  ecs: 'json1.1',
  cloudtrail: 'json1.1',
  monitoring: 'json1.0',
  lambda: 'rest-json',
};
/** the error codes each protocol family uses for an unknown key and a bad signature */
const AUTH_CODES: Record<Protocol, { unknownKey: string; badSignature: string; incomplete: string }> = {
  query: { unknownKey: 'InvalidClientTokenId', badSignature: 'SignatureDoesNotMatch', incomplete: 'IncompleteSignature' },
  ec2: { unknownKey: 'AuthFailure', badSignature: 'AuthFailure', incomplete: 'AuthFailure' },
  'json1.0': { unknownKey: 'UnrecognizedClientException', badSignature: 'InvalidSignatureException', incomplete: 'IncompleteSignatureException' },
  'json1.1': { unknownKey: 'UnrecognizedClientException', badSignature: 'InvalidSignatureException', incomplete: 'IncompleteSignatureException' },
  'rest-json': { unknownKey: 'UnrecognizedClientException', badSignature: 'InvalidSignatureException', incomplete: 'IncompleteSignatureException' },
};
/** what each protocol's requests look like on the wire */
const CONTENT_TYPES: Record<Protocol, string | null> = {
  query: 'application/x-www-form-urlencoded',
  ec2: 'application/x-www-form-urlencoded',
  'json1.0': 'application/x-amz-json-1.0',
  'json1.1': 'application/x-amz-json-1.1',
  'rest-json': null,
};

/** a request whose scope cannot be read still gets an answer in a plausible format */
function guessProtocol(req: IncomingMessage): Protocol {
  const type = req.headers['content-type'] ?? '';
  if (type.includes('json-1.0')) return 'json1.0';
  if (type.includes('json-1.1')) return 'json1.1';
  return (req.url ?? '').startsWith('/20') ? 'rest-json' : 'query';
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startFakeAws(state: FakeAwsState): Promise<FakeAws> {
  const requests: FakeAwsRequest[] = [];
  const effects: string[] = [];

  const server = createServer((req, res) => {
    void (async () => {
      const body = await bodyOf(req);
      const url = new URL(req.url ?? '/', 'http://fake');
      const auth = parseAuthorization(req.headers.authorization);
      const protocol = auth !== null && PROTOCOLS[auth.service] !== undefined ? PROTOCOLS[auth.service]! : guessProtocol(req);
      const service = auth?.service ?? 'unknown';
      const isForm = protocol === 'query' || protocol === 'ec2';
      const form = new URLSearchParams(isForm ? body.toString() : '');
      const input: Record<string, any> = protocol.startsWith('json') ? (JSON.parse(body.toString() || '{}') as Record<string, any>) : {};
      const target = req.headers['x-amz-target'] as string | undefined;
      const operation = isForm ? (form.get('Action') ?? '') : protocol === 'rest-json' ? `${req.method} ${url.pathname}` : (target?.split('.').pop() ?? '');
      res.on('finish', () =>
        requests.push({
          service: auth?.service ?? null,
          region: auth?.region ?? null,
          accessKeyId: auth?.accessKeyId ?? null,
          operation,
          contentType: req.headers['content-type'],
          target,
          status: res.statusCode,
          input: isForm ? Object.fromEntries(form) : input,
        }),
      );
      const codes = AUTH_CODES[protocol];
      const refuse = (code: string, message: string): void =>
        sendError(res, protocol, service, {
          status: 403,
          code,
          message,
          ...(protocol === 'json1.0' ? { namespace: 'com.amazonaws.cloudwatch', queryCompatible: true } : {}),
        });

      const amzDate = req.headers['x-amz-date'];
      if (auth === null) return refuse(codes.incomplete, 'Authorization header requires a SigV4 Credential, SignedHeaders and Signature');
      if (typeof amzDate !== 'string' || !/^\d{8}T\d{6}Z$/.test(amzDate) || !amzDate.startsWith(auth.date) || !auth.signedHeaders.includes('x-amz-date')) {
        return refuse(codes.incomplete, 'the request must carry a signed x-amz-date matching the credential scope date');
      }
      if (PROTOCOLS[auth.service] === undefined) return refuse(codes.incomplete, `the fake does not serve ${auth.service}`);
      const key = state.keys.get(auth.accessKeyId);
      const token = req.headers['x-amz-security-token'];
      if (key === undefined || (key.sessionToken ?? undefined) !== token)
        return refuse(codes.unknownKey, 'The security token included in the request is invalid.');
      if (expectedSignature({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body }, auth, key.secret) !== auth.signature) {
        return refuse(
          codes.badSignature,
          'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.',
        );
      }
      const wantedType = CONTENT_TYPES[protocol];
      if (wantedType !== null && !(req.headers['content-type'] ?? '').startsWith(wantedType)) {
        return sendError(res, protocol, service, {
          status: 400,
          code: 'UnsupportedProtocol',
          message: `${auth.service} speaks ${protocol} (${wantedType}), got ${req.headers['content-type']}`,
        });
      }
      const region = auth.region;
      const withKey = { ...key, id: auth.accessKeyId };
      switch (auth.service) {
        case 'sts':
          return sts({ form, region, key: withKey, state, res, effects });
        case 'ec2':
          return ec2({ form, region, key: withKey, state, res, effects });
        case 'autoscaling':
          return autoscaling({ form, region, key: withKey, state, res, effects });
        case 'ecs':
          return ecs({ operation, input, region, state, res, effects });
        case 'monitoring':
          return cloudwatch({ operation, input, region, state, res, effects });
        case 'cloudtrail':
          return cloudtrail({ operation, input, region, state, res, effects });
        default:
          return lambda(req.method ?? 'GET', url, region, state, res);
      }
    })().catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 'json1.1', 'unknown', { status: 500, code: 'InternalFailure', message: String(error) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    state,
    requests,
    effects,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
