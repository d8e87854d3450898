/**
 * `terraform-provider`: the Terraform / OpenTofu provider plugin (tfplugin6
 * over gRPC with go-plugin's handshake), serving the provisioning kinds of
 * cli/provision/. Terraform starts it; run by hand it says so and exits 1.
 */
import type { Command } from '../command.js';

export const terraformCommands: readonly Command[] = [
  {
    name: 'terraform-provider',
    summary: 'the Terraform provider plugin (started by Terraform/OpenTofu; see README "Terraform provider")',
    usage: [
      'started by Terraform with TF_PLUGIN_MAGIC_COOKIE and PLUGIN_CLIENT_CERT set; prints the go-plugin handshake line and serves tfplugin6 until shut down',
      'provider "service" { endpoint = "http://host:8080/api/v1", token = "..." } (default: SERVICE_API_URL, SERVICE_TOKEN)',
    ],
    options: {},
    offline: true,
    run: async ({ env }) => {
      // loaded on use: gRPC, protobuf and node-forge are needed by this command only
      const { servePlugin } = await import('../terraform/plugin.js');
      await servePlugin(
        env,
        (line) => process.stdout.write(`${line}\n`),
        (line) => process.stderr.write(`${line}\n`),
      );
    },
  },
];
