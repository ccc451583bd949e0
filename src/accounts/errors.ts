// The errors of keys, links and quotas, one wording per code: each says what happened and what to do next.
import { apiError, type ApiError } from '../errors.ts';

export function missingApiKey(): ApiError {
  return apiError(
    'missing_api_key',
    'Send your API key as "Authorization: Bearer imgp_…"; get one free with POST /v1/signup (see /pricing)',
  );
}

/** 401 invalid_api_key: for a key-shaped value, unknown or revoked; for anything else, what a key looks like. */
export function invalidApiKey(keyShaped: boolean): ApiError {
  return apiError(
    'invalid_api_key',
    keyShaped
      ? 'The API key is unknown or has been revoked; a lost key is replaced with POST /v1/keys/recover'
      : 'That is not an imgpipe API key: keys start with imgp_ followed by at least 32 letters and digits',
  );
}

const NEW_LINK = 'Ask for a new one on /pricing.';

/** 400 invalid_token: unknown, malformed, or a link of the other purpose. */
export function invalidToken(): ApiError {
  return apiError(
    'invalid_token',
    `This link is not recognised; open it from the mail as it is. ${NEW_LINK}`,
  );
}

export function tokenUsed(): ApiError {
  return apiError('token_used', `This link was already used. ${NEW_LINK}`);
}

export function tokenExpired(): ApiError {
  return apiError('token_expired', `This link has expired. ${NEW_LINK}`);
}

export function quotaExceeded(limit: number, tier: string, resetsOn: string, upgradeUrl: string): ApiError {
  return apiError(
    'quota_exceeded',
    `Monthly quota used up: ${limit} of ${limit} images used on the ${tier} plan. It resets on ${resetsOn}; upgrade for more.`,
    {
      body: { upgrade_url: upgradeUrl },
      headers: { 'X-Service-Quota-Limit': limit, 'X-Service-Quota-Remaining': 0 },
    },
  );
}

/**
 * 429 rate_limited, with Retry-After: the seconds left in the window. `by` names whose limit it is: the client's
 * address (signup, recovery, checkout) or the key (POST /v1/image/info).
 */
export function rateLimited(
  what: string,
  limit: number,
  windowSeconds: number,
  retryAfter: number,
  by: 'from your address' | 'with this key' = 'from your address',
): ApiError {
  return apiError(
    'rate_limited',
    `Too many ${what} ${by}: at most ${limit} per ${windowSeconds} s. Try again in ${retryAfter} s.`,
    { headers: { 'Retry-After': retryAfter } },
  );
}
