/**
 * The AWS SDK clients the connector uses, each loaded at its first call
 * (shared/lazy-module.ts: together ~90 MB of resident memory a server that
 * never calls AWS does not pay).
 */
import type * as AutoScaling from '@aws-sdk/client-auto-scaling';
import type * as CloudTrail from '@aws-sdk/client-cloudtrail';
import type * as CloudWatch from '@aws-sdk/client-cloudwatch';
import type * as Ec2 from '@aws-sdk/client-ec2';
import type * as Ecs from '@aws-sdk/client-ecs';
import type * as Lambda from '@aws-sdk/client-lambda';
import type * as Sts from '@aws-sdk/client-sts';
import { lazyModule } from '../shared/lazy-module.js';

export const autoScalingSdk = lazyModule<typeof AutoScaling>('@aws-sdk/client-auto-scaling');
export const cloudTrailSdk = lazyModule<typeof CloudTrail>('@aws-sdk/client-cloudtrail');
export const cloudWatchSdk = lazyModule<typeof CloudWatch>('@aws-sdk/client-cloudwatch');
export const ec2Sdk = lazyModule<typeof Ec2>('@aws-sdk/client-ec2');
export const ecsSdk = lazyModule<typeof Ecs>('@aws-sdk/client-ecs');
export const lambdaSdk = lazyModule<typeof Lambda>('@aws-sdk/client-lambda');
export const stsSdk = lazyModule<typeof Sts>('@aws-sdk/client-sts');
