/**
 * /cli/*: the command-line client's download, public like the spec says.
 * `install.sh` pins the tarball's SHA-256; `SHA256SUMS` and `manifest.json`
 * state it for those who download by hand.
 */
import { z } from 'zod';
import { cleanApiRoot, installScript } from '../../domains/cli-package/install-script.js';
import { CLI_NAME, CliPackageBuilder, type CliPackage } from '../../domains/cli-package/package-builder.js';
import { ServiceError } from '../../runtime/errors.js';
import type { HttpRequest } from '../http.js';
import { publicBaseUrl } from '../public-url.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

const manifest = z.object({
  name: z.literal(CLI_NAME),
  version: z.string(),
  file: z.string(),
  /** absolute URL of the tarball */
  url: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  size: z.number().int(),
  install: z.string(),
});

const tarballHeaders = (cli: CliPackage): Record<string, string> => ({
  'content-type': 'application/gzip',
  'content-disposition': `attachment; filename="${cli.fileName}"`,
  'x-checksum-sha256': cli.sha256,
  etag: `"${cli.sha256}"`,
});

export function cliRoutes({ config }: Services): AnyRoute[] {
  const builder = new CliPackageBuilder();
  const fallbackRoot = `http://${config.host}:${config.port}/api/v1`;
  // the Host header is the caller's to choose: a root that does not parse as a plain http(s) URL is not written into a script
  const apiRoot = (request: HttpRequest): string => cleanApiRoot(`${publicBaseUrl(config, request)}/api/v1`) ?? fallbackRoot;
  const text = (body: string, contentType: string) => ({ status: 200, headers: { 'content-type': contentType }, body });

  return [
    route({
      method: 'GET',
      path: '/cli/install.sh',
      tag: 'cli',
      auth: 'public',
      summary: 'Shell script that downloads the command-line client from this service, checks its SHA-256 and installs it',
      handler: async ({ request }) => text(installScript(apiRoot(request), await builder.get()), 'text/x-shellscript; charset=utf-8'),
    }),
    route({
      method: 'GET',
      path: '/cli/manifest.json',
      tag: 'cli',
      auth: 'public',
      summary: "The client package's version, file name, URL, size and SHA-256",
      response: manifest,
      handler: async ({ request }) => {
        const cli = await builder.get();
        const root = apiRoot(request);
        return {
          status: 200,
          json: {
            name: CLI_NAME,
            version: cli.version,
            file: cli.fileName,
            url: `${root}/cli/${cli.fileName}`,
            sha256: cli.sha256,
            size: cli.tarball.length,
            install: `curl -fsSL ${root}/cli/install.sh | sh`,
          },
        };
      },
    }),
    route({
      method: 'GET',
      path: '/cli/SHA256SUMS',
      tag: 'cli',
      auth: 'public',
      summary: 'Checksums of the client packages, in `sha256sum -c` format',
      handler: async () => {
        const cli = await builder.get();
        return text(`${cli.sha256}  ${cli.fileName}\n${cli.sha256}  ${CLI_NAME}.tgz\n`, 'text/plain; charset=utf-8');
      },
    }),
    route({
      method: 'GET',
      path: '/cli/:file',
      tag: 'cli',
      auth: 'public',
      summary: 'The client package: `service-proxy-cli-<version>.tgz`, or `service-proxy-cli.tgz` for the current one',
      params: z.object({ file: z.string().max(200) }),
      errors: [404],
      handler: async ({ params }) => {
        const cli = await builder.get();
        if (params.file !== cli.fileName && params.file !== `${CLI_NAME}.tgz`) {
          throw new ServiceError('not_found', `no client package named ${params.file}`);
        }
        return { status: 200, headers: tarballHeaders(cli), body: cli.tarball };
      },
    }),
  ];
}
