// A real DNS server on loopback (UDP) for the resolver tests: it answers from a table, or never, and records what
// it was asked.
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import type { TestContext } from 'node:test';
import dnsPacket from 'dns-packet';

/**
 * Answers per name: its A and AAAA addresses, sent after `delayMs` (default at once); a name not in the table is
 * NXDOMAIN; 'silent' never answers.
 */
export type DnsTable = Record<string, { A?: string[]; AAAA?: string[]; delayMs?: number } | 'silent'>;

export interface DnsServer {
  /** For dns.Resolver#setServers. */
  address: string;
  /** Questions received, as "name TYPE". */
  readonly questions: string[];
}

export async function startDnsServer(t: TestContext, table: DnsTable): Promise<DnsServer> {
  const socket = createSocket('udp4');
  const questions: string[] = [];
  const timers = new Set<NodeJS.Timeout>();
  socket.on('message', (message, peer) => {
    const query = dnsPacket.decode(message);
    const question = query.questions?.[0];
    if (!question) return;
    questions.push(`${question.name} ${question.type}`);
    const entry = table[question.name.toLowerCase()];
    if (entry === 'silent') return;
    const type = question.type === 'AAAA' ? 'AAAA' : 'A';
    const addresses = entry?.[type] ?? [];
    const reply = dnsPacket.encode({
      id: query.id,
      type: 'response',
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (entry ? 0 : 3), // 3: NXDOMAIN
      questions: [question],
      answers: addresses.map((data) => ({ type, name: question.name, ttl: 0, class: 'IN', data })),
    });
    const timer = setTimeout(() => {
      timers.delete(timer);
      socket.send(reply, peer.port, peer.address);
    }, entry?.delayMs ?? 0);
    timers.add(timer);
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  t.after(() => {
    timers.forEach(clearTimeout);
    socket.close();
  });
  return { address: `127.0.0.1:${socket.address().port}`, questions };
}
