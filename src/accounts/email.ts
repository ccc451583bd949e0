// The one e-mail rule: which addresses the service accepts and can hold, used by every endpoint and the CLI.

/** RFC 5321's limits: 64 characters before the @, 254 in all. */
const MAX_LOCAL_LENGTH = 64;
const MAX_ADDRESS_LENGTH = 254;
/** Printable characters a mailbox name may use unquoted (RFC 5322 atext and dots). */
const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+$/;
/** Host name labels; a single label such as `localhost` (the dev account, intranet hosts) is allowed. */
const DOMAIN_LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;

/**
 * True when `value` (already trimmed) is an address the service accepts: an unquoted local part and a host name.
 * Every address the service itself creates (`dev@localhost`) passes, so signup, recovery, checkout and the CLI
 * never refuse an address another part of the service holds.
 */
export function isAcceptedEmail(value: string): boolean {
  if (value.length > MAX_ADDRESS_LENGTH) return false;
  const at = value.lastIndexOf('@');
  if (at < 1) return false;
  const local = value.slice(0, at);
  const domain = value.slice(at + 1);
  if (local.length > MAX_LOCAL_LENGTH || !LOCAL_PART.test(local)) return false;
  if (local.startsWith('.') || local.endsWith('.') || local.includes('..')) return false;
  const labels = domain.split('.');
  return labels.every((label) => DOMAIN_LABEL.test(label));
}

export const EMAIL_RULE = 'must be an e-mail address such as you@example.com';
