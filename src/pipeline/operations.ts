// owns: the `operations` object: its strict schema (the registry's entries and their rules between fields), parsing
// from text or JSON, and client-facing messages.
import { z } from 'zod';
import { invalidOperations } from './errors.ts';
import type { Operations } from './operations/entry.ts';
import { OPERATION_ENTRIES, operationsObject, PIPELINE_ORDER } from './registry.ts';

/** What the schema validates into (declared beside the entries, whose families add its fields). */
export type { Operations };

/** The schema validates requests and feeds the OpenAPI document; `maxDimension` is MAX_RESIZE_DIMENSION. */
export function operationsSchema(maxDimension: number) {
  return operationsObject({ maxDimension })
    .superRefine((ops, ctx) => {
      for (const [, entry] of OPERATION_ENTRIES) {
        const problem = entry.crossCheck?.(ops);
        if (problem) ctx.addIssue({ code: 'custom', message: problem.message, path: problem.path });
      }
    })
    .describe(`What to do with the image. Applied in the fixed order ${PIPELINE_ORDER}.`);
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const path = ['operations', ...issue.path.map(String)].join('.');
  if (issue.code === 'unrecognized_keys') {
    // Keys are client text: at most 3 are echoed, each cut to 40 characters, so the message stays short.
    const keys = issue.keys
      .slice(0, 3)
      .map((k) => JSON.stringify(k.length > 40 ? `${k.slice(0, 40)}…` : k))
      .join(', ');
    return `${path} has unknown key${issue.keys.length > 1 ? 's' : ''} ${keys}`;
  }
  return `${path} ${issue.message}${'input' in issue ? describeInput(issue.input) : ''}`;
}

/**
 * A short echo of a bad value. Only primitives are rendered: JSON.stringify of a deeply nested array (which
 * JSON.parse accepts) overflows the stack, and a huge string must not be copied into the message.
 */
function describeInput(input: unknown): string {
  if (Array.isArray(input)) return ' (got an array)';
  if (typeof input === 'object' && input !== null) return ' (got an object)';
  if (typeof input === 'string' && input.length > 60) return ' (got a long string)';
  if (input === undefined || typeof input === 'function' || typeof input === 'symbol') return '';
  return ` (got ${typeof input === 'bigint' ? String(input) : JSON.stringify(input)})`;
}

/** Validates an already-decoded value; throws invalid_operations naming the first bad field. */
export function validateOperations(schema: ReturnType<typeof operationsSchema>, value: unknown): Operations {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  const first = result.error.issues[0];
  throw invalidOperations(first ? describeIssue(first) : 'operations is invalid');
}

const EXCERPT_CHARS = 60;

/** What arrived, shortened: shell quoting mistakes show at once. */
function excerpt(text: string): string {
  return text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text;
}

/** Parses the multipart `operations` text (JSON), not yet validated. */
export function operationsJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw invalidOperations(
      `operations is not valid JSON (received ${JSON.stringify(excerpt(text))}); send a JSON object such as {"format":"webp"}`,
    );
  }
}

/** Parses the multipart `operations` text (JSON) and validates it. */
export function parseOperationsText(schema: ReturnType<typeof operationsSchema>, text: string): Operations {
  return validateOperations(schema, operationsJson(text));
}
