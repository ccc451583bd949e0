// owns: how a checkout session id is kept in the store (a capability, like keys and tokens: only its hash).
import { createHash } from 'node:crypto';

/** Session ids are capabilities (the key page): stored only as hashes, like keys and tokens. */
export function sessionIdHash(sessionId: string): string {
  return createHash('sha256').update(sessionId).digest('hex');
}
