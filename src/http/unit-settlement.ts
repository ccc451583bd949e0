// owns: a request's charge: one quota unit, settled by how its response ended (the socket's 'finish' and 'close').
import type { Logger } from 'pino';
import type { QuotaUnit } from '../accounts/quota-unit.ts';
import type { FastifyReply } from 'fastify';
import type { Charge, Reservation } from '../job/index.ts';

/** A request's reserved unit: the quota figures its answer carries. */
export interface AnsweredUnit extends Reservation {
  readonly limit: number;
  readonly remaining: number;
}

/**
 * The charge of a job answered on `reply`: the unit `reserve` takes, settled exactly once: counted when a 200 was
 * delivered, refunded on an error or when the 200 never reached the client. A unit held by a killed process is
 * refunded by the other instances' sweep (src/accounts/abandoned-units.ts), or at the next start on SQLite
 * (src/main.ts). `clientGone` aborts when the client leaves before its answer.
 */
export function unitSettledByAnswer(
  reply: FastifyReply,
  reserve: () => Promise<QuotaUnit>,
  log: Pick<Logger, 'error'>,
): { charge: Charge<AnsweredUnit>; clientGone: AbortSignal } {
  const clientGone = new AbortController();
  const reserveUnit = async (): Promise<AnsweredUnit> => {
    const unit = await reserve();
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
    return {
      limit: unit.limit,
      remaining: unit.remaining,
      // Counted by the answer's end, not when the image exists.
      made: async () => {},
      failed: async (err) => {
        await settle(false);
        return err;
      },
    };
  };
  return { charge: { reserve: reserveUnit }, clientGone: clientGone.signal };
}
