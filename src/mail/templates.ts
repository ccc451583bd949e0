// The two link mails (signup, key recovery): a plain-text and an HTML part; they carry a link, never a key.
import { escapeHtml } from '../pages/layout.ts';

/** What a link mail is for (the store's token purposes). */
export type LinkPurpose = 'signup' | 'recover';

export interface MailContent {
  subject: string;
  text: string;
  html: string;
}

/** "30 minutes", "1 hour", "90 seconds": how long a link stays valid, in words. */
export function describeDuration(seconds: number): string {
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (seconds % 3600 === 0) return plural(seconds / 3600, 'hour');
  if (seconds % 60 === 0) return plural(seconds / 60, 'minute');
  return plural(seconds, 'second');
}

/** The verify address of a purpose, always under PUBLIC_BASE_URL (never the request's Host). */
export function verifyLink(publicBaseUrl: string, purpose: LinkPurpose, token: string): string {
  const path = purpose === 'signup' ? '/v1/signup/verify' : '/v1/keys/recover/verify';
  return `${publicBaseUrl}${path}?token=${encodeURIComponent(token)}`;
}

const WORDING: Record<LinkPurpose, { subject: string; intro: string; action: string; after: string }> = {
  signup: {
    subject: 'Your imgpipe sign-up link',
    intro: 'Someone (hopefully you) asked for a free imgpipe API key for this address.',
    action: 'Get my API key',
    after:
      'Opening the link shows a page with a button; your key is shown once when you press it. ' +
      'If this address already has a key, no new key is issued: use key recovery to replace a lost one.',
  },
  recover: {
    subject: 'Replace your imgpipe API key',
    intro: 'Someone (hopefully you) asked to replace the imgpipe API key of this address.',
    action: 'Replace my API key',
    after:
      'Pressing the button on the page revokes your current key at once and shows the new one, once. ' +
      'If you did not ask for this, ignore this mail: nothing changes until the link is used.',
  },
};

export function linkMail(purpose: LinkPurpose, link: string, ttlSeconds: number): MailContent {
  const w = WORDING[purpose];
  const validity = `The link works once and is valid for ${describeDuration(ttlSeconds)}.`;
  const text = [w.intro, '', `${w.action}:`, link, '', validity, w.after, '', '-- imgpipe', ''].join('\n');
  const html = `<!doctype html>
<html><body style="font-family:sans-serif;line-height:1.5">
<p>${escapeHtml(w.intro)}</p>
<p><a href="${escapeHtml(link)}" style="display:inline-block;padding:.6em 1.2em;background:#1f6feb;color:#fff;text-decoration:none;border-radius:6px">${escapeHtml(w.action)}</a></p>
<p>Or open this address: <br><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>
<p>${escapeHtml(validity)} ${escapeHtml(w.after)}</p>
<p>-- imgpipe</p>
</body></html>
`;
  return { subject: w.subject, text, html };
}

export interface UsageWarning {
  level: 80 | 100;
  used: number;
  limit: number;
  tier: string;
  resetsAt: Date;
  upgradeUrl: string;
  accountUrl: string;
}

/** The mail sent when an account reaches 80 % or all of its monthly quota: figures, reset date, where to upgrade. */
export function usageWarningMail(w: UsageWarning): MailContent & { links: string[] } {
  const resets = w.resetsAt.toISOString().slice(0, 10);
  const subject =
    w.level === 100
      ? 'imgpipe: your monthly quota is used up'
      : `imgpipe: you have used ${w.level} % of your monthly quota`;
  const state =
    w.level === 100
      ? `You have used all ${w.limit} images of your ${w.tier} plan this month. Further requests answer 429 quota_exceeded until the quota resets on ${resets}.`
      : `You have used ${w.used} of the ${w.limit} images of your ${w.tier} plan this month. The quota resets on ${resets}.`;
  const upgrade = 'Upgrade for a larger monthly quota:';
  const text = [
    state,
    '',
    upgrade,
    w.upgradeUrl,
    '',
    `Your usage: ${w.accountUrl}`,
    '',
    '-- imgpipe',
    '',
  ].join('\n');
  const html = `<!doctype html>
<html><body style="font-family:sans-serif;line-height:1.5">
<p>${escapeHtml(state)}</p>
<p><a href="${escapeHtml(w.upgradeUrl)}" style="display:inline-block;padding:.6em 1.2em;background:#1f6feb;color:#fff;text-decoration:none;border-radius:6px">See plans and upgrade</a></p>
<p>Your usage this month: <a href="${escapeHtml(w.accountUrl)}">${escapeHtml(w.accountUrl)}</a></p>
<p>-- imgpipe</p>
</body></html>
`;
  return { subject, text, html, links: [w.upgradeUrl, w.accountUrl] };
}

export interface CheckoutPaid {
  /** `changed`: a checkout started with the account's key (a plan change); `added`: one started without it. */
  kind: 'changed' | 'added';
  tier: string;
  quota: number;
  /** The account's tier once the checkout's subscription applies. */
  tierNow: string;
  accountUrl: string;
  /** A single-use recovery link: the checkout's key page shows no key for an account that existed before it. */
  keyLink: string;
  keyLinkTtlSeconds: number;
}

/** The mail to an existing account after a paid checkout: what was bought, how to cancel it, and a key link. */
export function checkoutMail(c: CheckoutPaid): MailContent & { links: string[] } {
  const images = `${c.quota.toLocaleString('en-US')} images / month`;
  const lines =
    c.kind === 'changed'
      ? {
          subject: `imgpipe: your plan is now ${c.tier}`,
          what: `Your imgpipe plan is now ${c.tier} (${images}), bought at a checkout started with your API key. Your other subscriptions are cancelled; your API key stays the same.`,
          cancel: `See or cancel it in the customer portal: open ${c.accountUrl}, enter your API key and press "Manage subscription".`,
        }
      : {
          subject: `imgpipe: a ${c.tier} subscription was added to your account`,
          what: `A ${c.tier} subscription (${images}) was bought for the imgpipe account of this address, at a checkout started without its API key. It runs beside any plan the account already had: nothing was cancelled. The account's plan is now ${c.tierNow}.`,
          cancel: `If you did not want it, cancel it in the customer portal: open ${c.accountUrl}, enter your API key and press "Manage subscription"; each subscription there has its own cancel button.`,
        };
  const key = `No key was shown at that checkout. To get this account's API key, open the link below: it replaces the current key, works once and is valid for ${describeDuration(c.keyLinkTtlSeconds)}. If you have your key, ignore it.`;
  const text = [lines.what, '', lines.cancel, '', key, c.keyLink, '', '-- imgpipe', ''].join('\n');
  const html = `<!doctype html>
<html><body style="font-family:sans-serif;line-height:1.5">
<p>${escapeHtml(lines.what)}</p>
<p>${escapeHtml(lines.cancel)}</p>
<p>${escapeHtml(key)}</p>
<p><a href="${escapeHtml(c.keyLink)}">${escapeHtml(c.keyLink)}</a></p>
<p>-- imgpipe</p>
</body></html>
`;
  return { subject: lines.subject, text, html, links: [c.accountUrl, c.keyLink] };
}
