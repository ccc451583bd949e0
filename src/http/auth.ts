// owns: Bearer API-key authentication for every key-protected endpoint (runs before the body is read).
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { hashApiKey, looksLikeApiKey, parseBearerToken } from '../accounts/api-key.ts';
import type { AppContext } from '../context.ts';
import { apiError } from '../errors.ts';
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
    throw apiError(
      'missing_api_key',
      'Send your API key as "Authorization: Bearer imgp_…"; get one free with POST /v1/signup (see /pricing)',
    );
  }
  // Anything not shaped like a key is refused without touching the store.
  const owner = looksLikeApiKey(key) ? await findActiveKeyOwner(ctx.store.db, hashApiKey(key)) : undefined;
  if (!owner) {
    throw apiError(
      'invalid_api_key',
      looksLikeApiKey(key)
        ? 'The API key is unknown or has been revoked; a lost key is replaced with POST /v1/keys/recover'
        : 'That is not an imgpipe API key: keys start with imgp_ followed by at least 32 letters and digits',
    );
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
