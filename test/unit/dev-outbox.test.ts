import { test } from 'node:test';
import assert from 'node:assert/strict';
import { splitLinks } from '../../src/mail/dev-outbox.ts';

test('dev mailbox: links in a mail text become links, the words around them stay words', () => {
  assert.deepEqual(
    splitLinks('Get my API key:\nhttp://127.0.0.1:3000/v1/signup/verify?token=ab_C-9\n\n-- imgpipe'),
    [
      { text: 'Get my API key:\n' },
      { link: 'http://127.0.0.1:3000/v1/signup/verify?token=ab_C-9' },
      { text: '\n\n-- imgpipe' },
    ],
  );
});

test('dev mailbox: a sentence’s final punctuation is not part of its link', () => {
  assert.deepEqual(splitLinks('Upgrade at https://img.example.com/pricing. Or not'), [
    { text: 'Upgrade at ' },
    { link: 'https://img.example.com/pricing' },
    { text: '. Or not' },
  ]);
});

test('dev mailbox: a text without links is one piece of words', () => {
  assert.deepEqual(splitLinks('no links here: ftp://x is not one'), [
    { text: 'no links here: ftp://x is not one' },
  ]);
});
