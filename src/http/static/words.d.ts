// Types of words.js (a browser module the pages import), for the unit tests that run its pure functions.
export interface Words {
  text: string;
  link?: { href: string; label: string };
}
export function humanDuration(seconds: number): string;
export const RECOVER_LINK: { href: string; label: string };
export function explainError(
  status: number,
  body: { error?: { code?: string; message?: string } } | undefined,
  retryAfter?: number,
): Words;
export function retryAfterOf(res: { headers: { get(name: string): string | null } }): number | undefined;
export function sayWords(element: HTMLElement, words: Words, kind?: string): void;
