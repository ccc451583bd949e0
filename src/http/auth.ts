// owns: Bearer API-key authentication for every key-protected endpoint (runs before the body is read).
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { hashApiKey, looksLikeApiKey, parseBearerToken } from '../accounts/api-key.ts';
import type { AppContext } from '../context.ts';
import { invalidApiKey, missingApiKey } from '../accounts/errors.ts';
import { findActiveKeyOwner, type KeyOwner } from '../store/keys.ts';

declare module 'fastify' {
  interface FastifyRequest {
    account?: KeyOwner;
  }
}

/** Resolves the Authorization header to the owning account, or throws missing_api_key / invalid_api_key. */
export async function authenticateApiKey(ctx: AppContext, header: string | undefined): Promise<KeyOwner> {
  const key = parseBearerToken(header);
  if (key === undefined) {
    throw missingApiKey();
  }
  // Anything not shaped like a key is refused without touching the store.
  const owner = looksLikeApiKey(key) ? await findActiveKeyOwner(ctx.store.db, hashApiKey(key)) : undefined;
  if (!owner) {
    throw invalidApiKey(looksLikeApiKey(key));
  }
  return owner;
}

export function requireApiKey(ctx: AppContext): onRequestAsyncHookHandler {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    request.account = await authenticateApiKey(ctx, request.headers.authorization);
  };
}

/** The authenticated account; only valid on routes that use requireApiKey. */
export function accountOf(request: FastifyRequest): KeyOwner {
  if (!request.account) throw new Error('route is missing requireApiKey');
  return request.account;
}
