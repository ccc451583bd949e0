// Table shapes of the store. Timestamps are ISO-8601 UTC strings so they compare the same on SQLite and PostgreSQL.
import type { Generated, Kysely } from 'kysely';

export interface AccountTable {
  id: string;
  /** Normalised for display and mail: trimmed, domain lower-cased. */
  email: string;
  /** Fully lower-cased: the unique, case-insensitive identity of the account. */
  email_key: string;
  tier: string;
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

export interface UsageTable {
  account_id: string;
  /** Calendar month in UTC, `YYYY-MM`. */
  month: string;
  used: Generated<number>;
}

/** A quota unit held by a request in flight: deleted when the unit is counted (200 delivered) or refunded. */
export interface QuotaReservationTable {
  id: string;
  account_id: string;
  month: string;
  created_at: string;
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

export interface CheckoutClaimTable {
  session_id: string;
  account_id: string;
  created_at: string;
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

export interface Database {
  accounts: AccountTable;
  api_keys: ApiKeyTable;
  usage: UsageTable;
  magic_tokens: MagicTokenTable;
  rate_limits: RateLimitTable;
  billing_events: BillingEventTable;
  checkout_claims: CheckoutClaimTable;
  local_customers: LocalCustomerTable;
  local_checkout_sessions: LocalCheckoutSessionTable;
  local_subscriptions: LocalSubscriptionTable;
  local_portal_sessions: LocalPortalSessionTable;
  quota_reservations: QuotaReservationTable;
}

export type Db = Kysely<Database>;
