// The runnable examples of examples/ (curl, JavaScript with @imgpipe/client, Python requests), shown in /docs as
// they are in the repository: test/clients/examples.test.ts runs every one of them, so the docs cannot rot.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repositoryPath } from '../paths.ts';

const EXAMPLES_DIR = repositoryPath('examples/');

const LANGUAGES = [
  { dir: 'curl', ext: 'sh', fence: 'sh', title: 'curl' },
  { dir: 'js', ext: 'mjs', fence: 'js', title: 'JavaScript (@imgpipe/client, in clients/js)' },
  { dir: 'python', ext: 'py', fence: 'python', title: 'Python (requests)' },
] as const;

const CASES = [
  { name: 'upload', title: 'Upload a file' },
  { name: 'url', title: 'Fetch by URL' },
  { name: 'errors', title: 'Handle errors' },
] as const;

/** examples/<language>/<case>.<ext>, relative to the repository. */
export const EXAMPLE_FILES = LANGUAGES.flatMap((l) =>
  CASES.map((c) => `examples/${l.dir}/${c.name}.${l.ext}`),
);

/** Markdown of every example, for the description of POST /v1/image in the OpenAPI document (rendered by /docs). */
export function examplesMarkdown(): string {
  const sections = LANGUAGES.map((l) => {
    const blocks = CASES.map((c) => {
      const code = readFileSync(join(EXAMPLES_DIR, l.dir, `${c.name}.${l.ext}`), 'utf8').trimEnd();
      return `**${c.title}**\n\n\`\`\`${l.fence}\n${code}\n\`\`\``;
    });
    return [`#### ${l.title}`, ...blocks].join('\n\n');
  });
  return ['### Examples', ...sections].join('\n\n');
}
