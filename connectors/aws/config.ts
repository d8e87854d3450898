/** The aws source config: its JSON Schema and the typed view. */
import type { JsonSchema } from '../contract.js';

export interface AwsConfig {
  /** the regions the tools and the sync read; the first is the default of single-resource tools and where STS is called */
  readonly regions: readonly string[];
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  /** assumed with STS AssumeRole using the keys above; every call then uses the role's temporary credentials */
  readonly roleArn?: string;
  readonly externalId?: string;
  /** one endpoint for every service (a test double, a proxy); default the services' regional endpoints */
  readonly endpoint?: string;
}

export const REGION_PATTERN = '^[a-z]{2}(-[a-z]+)+-\\d{1,2}$';

/** Secret fields carry `writeOnly: true` (the sources resource seals them at rest and masks them on read). */
export const AWS_CONFIG_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['regions', 'access_key_id', 'secret_access_key'],
  properties: {
    regions: {
      type: 'array',
      items: { type: 'string', pattern: REGION_PATTERN },
      minItems: 1,
      maxItems: 20,
      uniqueItems: true,
      description: 'the regions to read, e.g. ["us-east-1", "eu-west-1"]; the first is the default for tools on one resource',
    },
    access_key_id: {
      type: 'string',
      pattern: '^[A-Z0-9]{16,128}$',
      description: 'the access key id of an IAM user (or of temporary credentials with session_token)',
    },
    secret_access_key: { type: 'string', minLength: 1, maxLength: 256, writeOnly: true, description: 'the secret access key' },
    session_token: { type: 'string', minLength: 1, maxLength: 8192, writeOnly: true, description: 'the session token of temporary credentials' },
    role_arn: {
      type: 'string',
      pattern: '^arn:aws[a-z-]*:iam::\\d{12}:role/[\\w+=,.@/-]+$',
      description: 'a role to assume with STS AssumeRole (e.g. a read-mostly role in the account to inspect); the keys above must be allowed to assume it',
    },
    external_id: {
      type: 'string',
      minLength: 2,
      maxLength: 1224,
      pattern: '^[\\w+=,.@:/-]+$',
      description: "the role's external id, when its trust policy requires one",
    },
    endpoint: {
      type: 'string',
      format: 'uri',
      pattern: '^https?://',
      description: 'send every call here instead of the regional AWS endpoints (a proxy or a test double)',
    },
  },
  dependentRequired: { external_id: ['role_arn'] },
};

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

export function awsConfigOf(config: Readonly<Record<string, unknown>>): AwsConfig {
  const regions = Array.isArray(config['regions']) ? config['regions'].filter((r): r is string => typeof r === 'string') : [];
  const optional = (key: string, name: keyof AwsConfig) => (text(config[key]) === undefined ? {} : { [name]: text(config[key]) });
  return {
    regions,
    accessKeyId: text(config['access_key_id']) ?? '',
    secretAccessKey: text(config['secret_access_key']) ?? '',
    ...optional('session_token', 'sessionToken'),
    ...optional('role_arn', 'roleArn'),
    ...optional('external_id', 'externalId'),
    ...optional('endpoint', 'endpoint'),
  };
}
