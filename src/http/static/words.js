// owns: what the customer pages say in plain words: durations, and the API errors a person can meet on a page,
// each with its next step as a link. The JSON API keeps its own messages (they name endpoints for developers).

const plural = (n, unit) => `${n} ${unit}${n === 1 ? '' : 's'}`;

/** 2983 → "50 minutes", 45 → "45 seconds", 5400 → "1 hour 30 minutes": rounded up, never "0". */
export function humanDuration(seconds) {
  const s = Math.max(1, Math.ceil(Number(seconds) || 0));
  if (s < 60) return plural(s, 'second');
  const minutes = Math.ceil(s / 60);
  if (minutes < 60) return plural(minutes, 'minute');
  const hours = Math.floor(minutes / 60);
  if (hours < 24)
    return minutes % 60
      ? `${plural(hours, 'hour')} ${plural(minutes % 60, 'minute')}`
      : plural(hours, 'hour');
  const days = Math.floor(hours / 24);
  return hours % 24 ? `${plural(days, 'day')} ${plural(hours % 24, 'hour')}` : plural(days, 'day');
}

export const RECOVER_LINK = { href: '/pricing#recover', label: 'Recover your key' };

/**
 * An API error as a page says it: `{ text, link? }`. `status` and `retryAfter` (seconds, from the Retry-After
 * header) come from the answer, `body` is its JSON. Codes a page does not expect keep the API's message.
 */
export function explainError(status, body, retryAfter) {
  const code = body?.error?.code;
  switch (code) {
    case 'rate_limited':
      return {
        text: `Too many attempts from your network for now. Try again in ${humanDuration(retryAfter ?? 60)}.`,
      };
    case 'missing_api_key':
      return { text: 'Paste your API key first.', link: { href: '/pricing', label: 'Get a free key' } };
    case 'invalid_api_key':
      return {
        text:
          'This key does not work: it is mistyped or incomplete, or it was replaced (rotating or recovering a key ' +
          'stops the old one at once).',
        link: RECOVER_LINK,
      };
    case 'no_billing_account':
      return {
        text: 'You have no paid plan yet, so there is no subscription to manage. Choose a plan first.',
        link: { href: '/pricing', label: 'Compare plans' },
      };
    case 'provider_unavailable':
      return {
        text:
          'Paid plans cannot be bought or changed right now: the payment provider does not answer, or this server ' +
          'offers no paid plans. The free plan works as usual.',
      };
    case 'store_unavailable':
      return { text: 'The service is briefly unavailable. Try again in a moment.' };
    case 'session_not_found':
      return {
        text: 'This checkout is not recognised. Open this page from the payment provider as it sent you here.',
        link: { href: '/pricing', label: 'Back to pricing' },
      };
    case 'payment_incomplete':
      return { text: 'The payment is not complete yet. Reload this page in a moment.' };
    default:
      return { text: body?.error?.message ?? `The request failed (HTTP ${status}).` };
  }
}

/** The seconds of an answer's Retry-After header, or undefined. */
export function retryAfterOf(res) {
  const value = Number(res.headers.get('retry-after'));
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

/** Writes `text` and, when given, a link after it into a status element (never HTML from a message). */
export function sayWords(element, { text, link }, kind = '') {
  element.className = `status ${kind}`;
  element.textContent = text;
  if (link) {
    const a = document.createElement('a');
    a.href = link.href;
    a.textContent = link.label;
    element.append(' ', a);
  }
}
