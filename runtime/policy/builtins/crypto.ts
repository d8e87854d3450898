/** Digests and JWT decoding without verification (verification built-ins are not supported). */
import { createHash } from 'node:crypto';
import { builtinErr } from '../errors.js';
import { fromJSON, type Value } from '../value.js';
import { register, str } from './registry.js';

for (const [name, algo] of [
  ['crypto.sha256', 'sha256'],
  ['crypto.sha1', 'sha1'],
  ['crypto.md5', 'md5'],
] as const) {
  register(name, 1, (args) =>
    createHash(algo)
      .update(str(name, args, 0))
      .digest('hex'),
  );
}

/** io.jwt.decode: [header, payload, signature as hex]; nothing is verified */
register('io.jwt.decode', 1, (args) => {
  const token = str('io.jwt.decode', args, 0);
  const parts = token.split('.');
  if (parts.length !== 3) throw builtinErr('io.jwt.decode', 'encoded JWT had no period separators');
  const json = (part: string, what: string): Value => {
    if (!/^[A-Za-z0-9_-]*={0,2}$/.test(part)) throw builtinErr('io.jwt.decode', `JWT ${what} had invalid encoding`);
    try {
      return fromJSON(JSON.parse(Buffer.from(part, 'base64url').toString('utf8')));
    } catch {
      throw builtinErr('io.jwt.decode', `JWT ${what} had invalid encoding`);
    }
  };
  return [json(parts[0]!, 'header'), json(parts[1]!, 'payload'), Buffer.from(parts[2]!, 'base64url').toString('hex')];
});
