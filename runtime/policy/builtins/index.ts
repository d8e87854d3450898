/** All built-in families; importing this module registers them. */
import './numbers.js';
import './aggregates.js';
import './strings.js';
import './regex.js';
import './encoding.js';
import './time.js';
import './net.js';
import { RObject } from '../value.js';
import { register, unsupported } from './registry.js';

register('print', -1, () => true);
// the engine exposes no runtime information (config, env) to policies
register('opa.runtime', 0, () => new RObject());
// OPA built-ins this engine does not implement: known names, so `with` can mock them
for (const [name, arity] of [
  ['http.send', 1],
  ['io.jwt.decode_verify', 2],
  ['io.jwt.decode', 1],
  ['crypto.sha256', 1],
  ['crypto.md5', 1],
  ['rand.intn', 2],
  ['uuid.rfc4122', 1],
  ['net.lookup_ip_addr', 1],
  ['time.parse_ns', 2],
  ['time.format', 1],
] as const)
  unsupported(name, arity);

export { builtinArity, builtinNames, callBuiltin, isBuiltin, UnsupportedBuiltin } from './registry.js';
