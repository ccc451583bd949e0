// owns: settling a request's quota unit by how its response ended (the socket's 'finish' and 'close').
import type { Logger } from 'pino';
import type { QuotaUnit } from '../accounts/quota-unit.ts';
import type { FastifyReply } from 'fastify';

/**
 * Settles the unit exactly once: counted when a 200 was delivered, refunded on an error or when the 200 never
 * reached the client. A unit held by a killed process is refunded by the other instances' sweep
 * (src/accounts/abandoned-units.ts), or at the next start on SQLite (src/main.ts). Returns the signal that aborts
 * when the client leaves before its answer, and the refund for the handler's failure paths.
 */
export function settleWithResponse(
  reply: FastifyReply,
  unit: QuotaUnit,
  log: Pick<Logger, 'error'>,
): { clientGone: AbortSignal; refund(): Promise<void> } {
  const clientGone = new AbortController();
  let settled = false;
  const settle = async (counted: boolean) => {
    if (settled) return;
    settled = true;
    await (counted ? unit.count() : unit.refund());
  };
  // 'finish' means the whole response was handed to the socket; 'close' without it means the client left.
  let delivered = false;
  reply.raw.once('finish', () => {
    delivered = true;
  });
  reply.raw.once('close', () => {
    if (!delivered) clientGone.abort();
    settle(delivered && reply.statusCode === 200).catch((err: unknown) =>
      log.error({ err }, 'settling the quota unit failed'),
    );
  });
  return { clientGone: clientGone.signal, refund: () => settle(false) };
}
