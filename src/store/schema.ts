// Table shapes of the store. Timestamps are ISO-8601 UTC strings so they compare the same on SQLite and PostgreSQL.
import type { Generated, Kysely } from 'kysely';

export interface AccountTable {
  id: string;
  /** Normalised for display and mail: trimmed, domain lower-cased. */
  email: string;
  /** Fully lower-cased: the unique, case-insensitive identity of the account. */
  email_key: string;
  /** The tier in force: the highest of operator_tier and the tiers of the paying subscriptions (auth reads it). */
  tier: string;
  /** The tier an operator set (`imgpipe keys create --tier`); free unless one did. */
  operator_tier: string;
  /** The subscription whose paid checkout created the account; null for an account made any other way. */
  created_by_subscription: string | null;
  billing_customer_id: string | null;
  subscription_id: string | null;
  subscription_status: string | null;
  /** Provider timestamp (seconds) of the subscription state applied last; older events never overwrite it. */
  subscription_updated_at: number | null;
  created_at: string;
}

export interface ApiKeyTable {
  id: string;
  account_id: string;
  key_hash: string;
  created_at: string;
  revoked_at: string | null;
}

/** Day of the month 1..31 → its column on the usage row. */
export type DayColumn = `d${number}`;
export const DAY_COLUMNS: readonly DayColumn[] = Array.from(
  { length: 31 },
  (_, i) => `d${i + 1}` as DayColumn,
);

export function dayColumn(day: number): DayColumn {
  return `d${day}`;
}

export interface UsageTable {
  account_id: string;
  /** Calendar month in UTC, `YYYY-MM`. */
  month: string;
  used: Generated<number>;
  /** Units counted on each day of the month (UTC): d1..d31, kept by the statements that count `used`. */
  [day: DayColumn]: Generated<number>;
}

/** A mail waiting to be sent, or sent (bodies erased), or given up after 24 hours of failures. */
export interface MailOutboxTable {
  id: string;
  /** Set for mails that must go out at most once (usage warnings): a unique key. */
  dedupe_key: string | null;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string;
  /** JSON array of the links the mail carries (the dev outbox logs them). */
  links: string;
  /** `pending`, `sent` or `failed`. */
  status: string;
  attempts: Generated<number>;
  next_attempt_at: string;
  /** The instance holding the mail while it tries to send it, until lease_until. */
  lease_owner: string | null;
  lease_until: string | null;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
}

/** A quota unit held by a request in flight: deleted when the unit is counted (200 delivered) or refunded. */
export interface QuotaReservationTable {
  id: string;
  account_id: string;
  month: string;
  created_at: string;
  /** The instance whose request holds the unit; null for rows written before migration 008. */
  instance_id: string | null;
}

/** A running `imgpipe serve`: it writes heartbeat_at every few seconds; a silent one is taken for dead. */
export interface InstanceTable {
  id: string;
  started_at: string;
  heartbeat_at: string;
}

export interface MagicTokenTable {
  token_hash: string;
  purpose: string;
  email: string;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

export interface RateLimitTable {
  bucket: string;
  window_start: number;
  count: number;
}

export interface BillingEventTable {
  event_id: string;
  type: string;
  received_at: string;
}

/** A provider subscription of an account; the account's tier is the highest of its paying ones (billing/tiers.ts). */
export interface SubscriptionTable {
  id: string;
  account_id: string;
  customer_id: string | null;
  /** Paid tier of its price; null when the price was never one of the configured ones. */
  tier: string | null;
  status: string;
  /** Provider time (seconds) the subscription started. */
  started_at: number;
  /** Provider time (seconds) of the state written last; an older state never overwrites it. */
  updated_at: number;
}

export interface CheckoutClaimTable {
  session_id: string;
  account_id: string;
  created_at: string;
}

/** A checkout session this service created, by SHA-256 of its id. */
export interface CheckoutSessionTable {
  session_id_hash: string;
  created_at: string;
  /** The account whose key started the checkout (the owner's plan change); null when started without a key. */
  owner_account_id: string | null;
}

/** Local payment provider (no STRIPE_SECRET_KEY): times are epoch seconds, like a provider's. */
export interface LocalCustomerTable {
  id: string;
  email_key: string;
  email: string;
  created_at: number;
}

export interface LocalCheckoutSessionTable {
  id: string;
  customer_id: string;
  email: string;
  tier: string;
  /** `open` until paid, then `complete`. */
  status: string;
  subscription_id: string | null;
  created_at: number;
  /** What the checkout page says before payment (a plan it replaces, or that it runs beside any other). */
  notice: string | null;
}

export interface LocalSubscriptionTable {
  id: string;
  customer_id: string;
  email: string;
  tier: string;
  /** `active` or `canceled`. */
  status: string;
  created_at: number;
  updated_at: number;
}

export interface LocalPortalSessionTable {
  token_hash: string;
  customer_id: string;
  expires_at: number;
}

/** A page of the service's own portal: the account it shows, until expires_at (ISO time). */
export interface PortalSessionTable {
  token_hash: string;
  account_id: string;
  expires_at: string;
}

/** Signed delivery URLs of one account: the signing secret and the origins its URLs may fetch. */
export interface DeliverySettingsTable {
  account_id: string;
  /** The signing secret, kept as is: verifying an HMAC needs it (docs/security.md). Null until one is created. */
  secret: string | null;
  secret_created_at: string | null;
  /** The secret before the last rotation, still verifying until previous_valid_until. */
  previous_secret: string | null;
  previous_valid_until: string | null;
  /** JSON array of origins (`https://host[:port]`); empty: any origin the fetch guard allows. */
  allowed_origins: Generated<string>;
}

/** Delivery images (cache misses counted as units) per account and UTC day `YYYY-MM-DD`. */
export interface DeliveryUsageTable {
  account_id: string;
  day: string;
  images: Generated<number>;
}

/** One derivative charged in a UTC calendar month `YYYY-MM`: at most one row, so one unit. */
export interface DeliveryChargeTable {
  account_id: string;
  month: string;
  /** A hash of source, normalised options, negotiated format and purge generations (derivativeKey). */
  derivative: string;
  charged_at: string;
  /** How often it was made this month, on any instance (a unit buys MAKES_PER_UNIT makes). */
  makes: Generated<number>;
}

/** A derivative whose make failed: its error, answered from memory by every instance until `retry_at`. */
export interface DeliveryFailureTable {
  account_id: string;
  derivative: string;
  code: string;
  message: string;
  /** Failures in a row: each doubles the memory of the next. */
  failures: number;
  retry_at: string;
}

/** An account's purge generation per source (`source_key` a hash of it) or for all sources (`source_key` ''). */
export interface DeliveryPurgeTable {
  account_id: string;
  source_key: string;
  generation: Generated<number>;
  purged_at: string;
}

/**
 * What a delivery source is, learnt by its first request: `source_key` a hash of the source URL, its `v:` and the
 * purge generations, so a new version or a purge learns it again.
 */
export interface DeliverySourceTable {
  account_id: string;
  source_key: string;
  /** Upright size, after the EXIF orientation. */
  width: number;
  height: number;
  frames: number;
  format: string;
  /** The fetched body's length: a make that fetches another length learns the source again. */
  bytes: number;
  learnt_at: string;
}

/** An overlay (watermark) an account stored, by account and name. */
export interface OverlayTable {
  account_id: string;
  name: string;
  image: Uint8Array;
  /** `png` or `webp`. */
  format: string;
  bytes: number;
  width: number;
  height: number;
  /** SHA-256 hex of the image: a delivery derivative's cache key names it. */
  content_hash: string;
  created_at: string;
  updated_at: string;
}

export interface PresetTable {
  account_id: string;
  name: string;
  /** The operations object as JSON text, validated when stored. */
  operations: string;
  created_at: string;
  updated_at: string;
}

export interface DeliveryPolicyTable {
  account_id: string;
  /** The policy as JSON text: `{"sources","widths","qualities","presets"}`. */
  policy: string;
  updated_at: string;
}

export interface Database {
  accounts: AccountTable;
  api_keys: ApiKeyTable;
  usage: UsageTable;
  magic_tokens: MagicTokenTable;
  rate_limits: RateLimitTable;
  billing_events: BillingEventTable;
  checkout_claims: CheckoutClaimTable;
  subscriptions: SubscriptionTable;
  checkout_sessions: CheckoutSessionTable;
  local_customers: LocalCustomerTable;
  local_checkout_sessions: LocalCheckoutSessionTable;
  local_subscriptions: LocalSubscriptionTable;
  local_portal_sessions: LocalPortalSessionTable;
  portal_sessions: PortalSessionTable;
  quota_reservations: QuotaReservationTable;
  mail_outbox: MailOutboxTable;
  instances: InstanceTable;
  delivery_settings: DeliverySettingsTable;
  delivery_usage: DeliveryUsageTable;
  delivery_charges: DeliveryChargeTable;
  delivery_purges: DeliveryPurgeTable;
  delivery_failures: DeliveryFailureTable;
  delivery_sources: DeliverySourceTable;
  overlays: OverlayTable;
  presets: PresetTable;
  delivery_policies: DeliveryPolicyTable;
}

export type Db = Kysely<Database>;
