/** All built-in families; importing this module registers them. */
import './numbers.js';
import './aggregates.js';
import './strings.js';
import './regex.js';
import './encoding.js';
import './time.js';
import './net.js';
import './crypto.js';
import { RObject } from '../value.js';
import { register, unsupported } from './registry.js';

register('print', -1, () => true);
// the engine exposes no runtime information (config, env) to policies
register('opa.runtime', 0, () => new RObject());
// OPA built-ins this engine does not implement: known names, so `with` can mock them
for (const [name, arity] of [
  ['http.send', 1],
  ['io.jwt.decode_verify', 2],
  ['rand.intn', 2],
  ['uuid.rfc4122', 1],
  ['net.lookup_ip_addr', 1],
  ['time.parse_ns', 2],
  ['crypto.hmac.sha256', 2],
  ['io.jwt.verify_hs256', 2],
  ['io.jwt.verify_rs256', 2],
] as const)
  unsupported(name, arity);

export { builtinArity, callBuiltin, isBuiltin, UnsupportedBuiltin } from './registry.js';
