/**
 * The plugin process as Terraform (through HashiCorp's go-plugin) starts it:
 * the magic cookie in the environment proves a plugin host launched it; the
 * provider listens on 127.0.0.1 at a random port with mutual TLS (its own
 * self-signed certificate, made at start with node-forge; the only client
 * accepted is the one whose certificate Terraform put in PLUGIN_CLIENT_CERT)
 * and prints the handshake line
 * `1|6|tcp|127.0.0.1:PORT|grpc|<server certificate DER, base64 without padding>`
 * on stdout. Beside tfplugin6.Provider it serves what go-plugin asks for:
 * grpc.health.v1.Health ("plugin" is SERVING), plugin.GRPCController
 * (Shutdown ends the process), plugin.GRPCStdio and plugin.GRPCBroker.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import forge from 'node-forge';
import { CliError } from '../errors.js';
import { TerraformProvider } from './provider.js';

const MAGIC_COOKIE_KEY = 'TF_PLUGIN_MAGIC_COOKIE';
export const MAGIC_COOKIE_VALUE = 'd602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2';
const CORE_PROTOCOL_VERSION = 1;
const PROTOCOL_VERSION = 6;

/** the three .proto files (tfplugin6, grpc health, go-plugin's services): beside this module, or in the source tree when it runs from dist/ */
export const PROTO_FILES = ['tfplugin6.proto', 'health.proto', 'go-plugin.proto'].map((file) => {
  const candidates = [new URL(`./proto/${file}`, import.meta.url), new URL(`../../../cli/terraform/proto/${file}`, import.meta.url)].map((url) =>
    fileURLToPath(url),
  );
  return candidates.find((path) => existsSync(path)) ?? (candidates[0] as string);
});
/** how both sides load them: field names as in the .proto, enums as names, 64-bit integers as numbers */
const PROTO_OPTIONS: protoLoader.Options = { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true };

export interface Certificate {
  readonly certPem: string;
  readonly keyPem: string;
  /** DER, base64 without padding (go's base64.RawStdEncoding), as the handshake line carries it */
  readonly derBase64: string;
}

/** a self-signed certificate for `localhost` / 127.0.0.1, usable as its own CA, for TLS servers and clients */
export function selfSignedCertificate(commonName = 'localhost'): Certificate {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  // positive serial: a leading byte below 0x80
  cert.serialNumber = `01${randomBytes(15).toString('hex')}`;
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 30 * 365 * 24 * 3600_000);
  const subject = [
    { name: 'commonName', value: commonName },
    { name: 'organizationName', value: 'service-proxy-cli terraform-provider' },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, keyCertSign: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true, clientAuth: true },
    {
      name: 'subjectAltName',
      altNames: [
        { type: 2, value: 'localhost' },
        { type: 7, ip: '127.0.0.1' },
      ],
    },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(keyPem), forge.md.sha256.create());
  const der = forge.asn1.toDer(forge.pki.certificateToAsn1(cert)).getBytes();
  return { certPem: forge.pki.certificateToPem(cert), keyPem, derBase64: Buffer.from(der, 'binary').toString('base64').replace(/=+$/, '') };
}

type Handler = (request: never) => unknown;
/** a unary gRPC handler from a function answering the response (or its promise) */
const unary =
  (handler: Handler): grpc.handleUnaryCall<unknown, unknown> =>
  (call, callback) => {
    Promise.resolve()
      .then(() => handler(call.request as never))
      .then(
        (response) => callback(null, response),
        (error: unknown) => callback({ code: grpc.status.INTERNAL, details: error instanceof Error ? error.message : String(error) }),
      );
  };

interface Loaded {
  tfplugin6: { Provider: grpc.ServiceClientConstructor };
  grpc: { health: { v1: { Health: grpc.ServiceClientConstructor } } };
  plugin: { GRPCController: grpc.ServiceClientConstructor; GRPCStdio: grpc.ServiceClientConstructor; GRPCBroker: grpc.ServiceClientConstructor };
}

const loadProtocol = (): Loaded => grpc.loadPackageDefinition(protoLoader.loadSync(PROTO_FILES, PROTO_OPTIONS)) as unknown as Loaded;

/**
 * Serves the provider until Terraform shuts it down. Writes the handshake
 * line through `announce`; resolves when the process should end.
 */
export async function servePlugin(env: NodeJS.ProcessEnv, announce: (line: string) => void, log: (line: string) => void): Promise<void> {
  if (env[MAGIC_COOKIE_KEY] !== MAGIC_COOKIE_VALUE) {
    throw new CliError(
      'api_error',
      'This is a Terraform provider plugin: it is started by Terraform or OpenTofu, not by hand. Install it as the README section "Terraform provider" says (dev_overrides in ~/.terraformrc) and run terraform plan / apply.',
    );
  }
  const versions = env['PLUGIN_PROTOCOL_VERSIONS'];
  if (versions && !versions.split(',').includes(String(PROTOCOL_VERSION))) {
    log(`the host asks for plugin protocol versions ${versions}; this provider speaks ${PROTOCOL_VERSION} only`);
  }
  const loaded = loadProtocol();
  const provider = new TerraformProvider(env, env['TF_LOG'] ? log : () => undefined);
  const server = new grpc.Server();
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const shutdown = (): void => {
    server.tryShutdown(() => finish());
    // the stdio and broker streams go-plugin keeps open end with the server
    setTimeout(() => {
      server.forceShutdown();
      finish();
    }, 1000).unref();
  };

  const rpc = (name: keyof TerraformProvider) => unary((request) => (provider[name] as (request: unknown) => unknown).call(provider, request));
  server.addService(loaded.tfplugin6.Provider.service, {
    GetMetadata: rpc('getMetadata'),
    GetProviderSchema: rpc('getProviderSchema'),
    ValidateProviderConfig: rpc('validateProviderConfig'),
    ValidateResourceConfig: rpc('validateResourceConfig'),
    ValidateDataResourceConfig: rpc('validateDataResourceConfig'),
    UpgradeResourceState: rpc('upgradeResourceState'),
    GetResourceIdentitySchemas: rpc('getResourceIdentitySchemas'),
    ConfigureProvider: rpc('configureProvider'),
    ReadResource: rpc('readResource'),
    PlanResourceChange: rpc('planResourceChange'),
    ApplyResourceChange: rpc('applyResourceChange'),
    ImportResourceState: rpc('importResourceState'),
    ReadDataSource: rpc('readDataSource'),
    StopProvider: unary(() => ({ Error: '' })),
  });

  const SERVING = 'SERVING';
  const healthOf = (service: string): string | null => (service === '' || service === 'plugin' ? SERVING : null);
  server.addService(loaded.grpc.health.v1.Health.service, {
    Check: (call: grpc.ServerUnaryCall<{ service: string }, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const status = healthOf(call.request.service);
      if (status === null) callback({ code: grpc.status.NOT_FOUND, details: `unknown service ${call.request.service}` });
      else callback(null, { status });
    },
    Watch: (call: grpc.ServerWritableStream<{ service: string }, unknown>) => {
      call.write({ status: healthOf(call.request.service) ?? 'SERVICE_UNKNOWN' });
    },
  });
  server.addService(loaded.plugin.GRPCController.service, {
    Shutdown: (_call: unknown, callback: grpc.sendUnaryData<unknown>) => {
      callback(null, {});
      setImmediate(shutdown);
    },
  });
  // this provider writes its logs to stderr, which go-plugin reads itself: the stream stays open and empty
  server.addService(loaded.plugin.GRPCStdio.service, { StreamStdio: () => undefined });
  server.addService(loaded.plugin.GRPCBroker.service, {
    StartStream: (call: grpc.ServerDuplexStream<unknown, unknown>) => {
      call.on('data', () => undefined);
      call.on('end', () => call.end());
    },
  });

  const clientCert = env['PLUGIN_CLIENT_CERT'];
  let credentials: grpc.ServerCredentials;
  let certField = '';
  if (clientCert && clientCert.trim() !== '') {
    try {
      forge.pki.certificateFromPem(clientCert);
    } catch (error) {
      throw new CliError('api_error', `PLUGIN_CLIENT_CERT is not a PEM certificate: ${(error as Error).message}`);
    }
    const own = selfSignedCertificate();
    credentials = grpc.ServerCredentials.createSsl(
      Buffer.from(clientCert),
      [{ private_key: Buffer.from(own.keyPem), cert_chain: Buffer.from(own.certPem) }],
      true,
    );
    certField = own.derBase64;
  } else {
    // go-plugin without AutoMTLS: plain gRPC on loopback, an empty certificate field
    log('PLUGIN_CLIENT_CERT is not set: serving without TLS on 127.0.0.1');
    credentials = grpc.ServerCredentials.createInsecure();
  }
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', credentials, (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  // go-plugin counts interrupts itself; Terraform stops the provider through Shutdown, not a signal
  process.on('SIGINT', () => undefined);
  announce(`${CORE_PROTOCOL_VERSION}|${PROTOCOL_VERSION}|tcp|127.0.0.1:${port}|grpc|${certField}`);
  await finished;
}
