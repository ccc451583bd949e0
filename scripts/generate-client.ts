// Writes clients/js/registry.js and registry.d.ts from the operations registry (src/pipeline/registry.ts): the
// delivery URL options deliveryUrl writes and the types of every operation, so an operation added to the registry
// is in the client from its entry alone. `npm run generate:client`; test/unit/operations-registry.test.ts fails when
// the files are not what this writes.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { UrlOption, UrlValueKind } from '../src/pipeline/operations/entry.ts';
import { OPERATION_ENTRIES, URL_OPTIONS } from '../src/pipeline/registry.ts';

const HEADER =
  "// Generated from imgpipe's operations registry (src/pipeline/registry.ts) by `npm run generate:client`: do not edit.\n";

/** A field's name among deliveryUrl's options: the entry's `client`, else its own name in camelCase. */
function clientName(option: UrlOption): string {
  const own = option.path.at(-1)!;
  return option.client ?? own.replace(/_(\w)/g, (_, c: string) => c.toUpperCase());
}

type JsonSchema = {
  type?: string;
  const?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
};

/** A TypeScript type for what a JSON schema accepts (the shapes the operations' schemas use). */
function tsType(schema: JsonSchema): string {
  if (schema.anyOf) return schema.anyOf.map(tsType).join(' | ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  switch (schema.type) {
    case 'integer':
    case 'number':
      return 'number';
    case 'string':
    case 'boolean':
    case 'null':
      return schema.type;
    case 'array': {
      const item = tsType(schema.items ?? {});
      return item.includes(' ') ? `(${item})[]` : `${item}[]`;
    }
    case 'object': {
      const fields = Object.entries(schema.properties ?? {}).map(
        ([name, field]) => `${name}${schema.required?.includes(name) ? '' : '?'}: ${tsType(field)}`,
      );
      return `{ ${fields.join('; ')} }`;
    }
    default:
      return 'unknown';
  }
}

/** The type a URL option's value takes in deliveryUrl's options, by how its text reads. */
function optionType(option: UrlOption): string {
  const kinds: Record<UrlValueKind, string> = {
    'integer-or-word': 'number | string',
    'number-or-word': 'number | string',
    word: 'string',
    boolean: 'boolean',
    list: 'string[]',
    'point-or-word': 'string | { x: number; y: number }',
    fields: `true | number${option.fields?.length ? ` | { ${option.fields.map((f) => `${f}?: number`).join('; ')} }` : ''}`,
    colour: 'string',
  };
  return kinds[option.kind];
}

/** The two files, by name. */
export function clientRegistryFiles(): Record<'registry.js' | 'registry.d.ts', string> {
  const rows = URL_OPTIONS.map((option) =>
    JSON.stringify([clientName(option), option.name, option.kind, option.fields ?? []]),
  );
  const js = `${HEADER}
/** Every delivery URL option in the URL's order: [deliveryUrl's option, URL segment name, how its text reads, fields]. */
export const URL_OPTIONS = Object.freeze([
${rows.map((row) => `  ${row},`).join('\n')}
]);
`;
  const operations = OPERATION_ENTRIES.map(([key, entry]) => {
    const schema = z.toJSONSchema(entry.schema({ maxDimension: 1 }), { io: 'input', unrepresentable: 'any' });
    return `  ${key}?: ${tsType(schema as JsonSchema)};`;
  });
  const options = URL_OPTIONS.map((option) => `  ${clientName(option)}?: ${optionType(option)};`);
  const dts = `${HEADER}
/** Every operation's field as the API's schema accepts it (index.d.ts's Operations narrows them). */
export interface RegistryOperations {
${operations.join('\n')}
}

/** Every delivery URL option's value as deliveryUrl takes it (index.d.ts's DeliveryUrlOptions narrows them). */
export interface RegistryDeliveryOptions {
${options.join('\n')}
}

export declare const URL_OPTIONS: readonly (readonly [
  option: keyof RegistryDeliveryOptions,
  name: string,
  kind: string,
  fields: readonly string[],
])[];
`;
  return { 'registry.js': js, 'registry.d.ts': dts };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [name, text] of Object.entries(clientRegistryFiles())) {
    writeFileSync(new URL(`../clients/js/${name}`, import.meta.url), text);
  }
}
