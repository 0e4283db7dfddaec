/**
 * The fields' rules without a database (issue 35, build items 1 and 5): what a text field may hold, the one email
 * rule the checkout, the mailer and config share, the mailbox a code limit counts, and config refusing what a
 * header or a page could be rewritten with.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { mailboxKey, parseMailbox } from '../../src/fields/mailbox.js';
import { textFault, type TextRule } from '../../src/fields/text.js';
import { plainMailAddress } from '../../src/mail/mail-parts.js';

const ONE_LINE: TextRule = { max: 200, lines: 'single' };
const LINES: TextRule = { max: 200, lines: 'multi' };

describe('what a text field may hold', () => {
  it('C0 and C1 controls are refused; a line break only in a multi-line field', () => {
    for (const text of ['\u001b[2J\u001b[HAll orders paid', '1 Main St\u001b]52;c;cm0gLXJmIH4K\u0007', 'a\u0000b', 'a\u007fb', 'a\u0085b', 'a\u009bb']) {
      assert.equal(textFault(text, ONE_LINE), 'control', JSON.stringify(text));
      assert.equal(textFault(text, LINES), 'control', JSON.stringify(text));
    }
    assert.equal(textFault('a\nb', ONE_LINE), 'line_break');
    assert.equal(textFault('a\r\nb\tc', LINES), undefined);
    assert.equal(textFault('a\rb', LINES), 'control', 'a bare carriage return');
    assert.equal(textFault('a\u2028b', LINES), 'line_break');
  });

  it('bidirectional overrides and isolates, and hidden format characters, are refused', () => {
    for (const text of ['\u202eteertS kaO 21', 'Apt 1\u202e 5$ eef gnildnah', 'a\u202ab', 'a\u2066b\u2069', 'a\u2068b']) assert.equal(textFault(text, ONE_LINE), 'bidi', JSON.stringify(text));
    for (const text of ['a\u200bb', 'a\u2060b', '\ufeffa', 'x\u00ady', 'a\u061cb', 'a\u200eb', 'a\u200fb', 'a\u200d', '\u200da', 'a\u200d\u200db', 'a\u{e0041}b'])
      assert.equal(textFault(text, ONE_LINE), 'invisible', JSON.stringify(text));
  });

  it('what people write is kept: accents, scripts, emoji sequences joined by ZWJ, joiners inside words, flags', () => {
    for (const text of ["Zoë O'Brien-Núñez", 'میخواهم', 'क्‍ष', 'می‌خواهم', '👩‍💻 and 👨‍👩‍👧', '🏴󠁧󠁢󠁳󠁣󠁴󠁿', 'Apt 4 · 2nd floor'])
      assert.equal(textFault(text, ONE_LINE), undefined, JSON.stringify(text));
  });

  it('a text over the field\'s length is refused, not cut', () => {
    assert.equal(textFault('x'.repeat(200), ONE_LINE), undefined);
    assert.equal(textFault('x'.repeat(201), ONE_LINE), 'too_long');
  });
});

describe('the one email rule', () => {
  const refused = ['a..b@example.com', 'a.@example.com', '.a@example.com', '"a"@example.com', 'a@b_c.com', 'a,b@example.com', 'a b@example.com', 'a@example', 'a@1.2.3.4', 'a@[1.2.3.4]', '@example.com', 'a@-x.com', `${'a'.repeat(65)}@example.com`, `a@${'b'.repeat(250)}.com`];

  it('refuses what the mailer could never send to, in the checkout, the mailer and config alike', () => {
    for (const address of refused) {
      assert.equal(parseMailbox(address), undefined, address);
      assert.equal(plainMailAddress(address), undefined, address);
      assert.throws(() => loadConfig({ MAIL_FROM: address }), (error: unknown) => error instanceof ConfigError && error.variable === 'MAIL_FROM', address);
    }
  });

  it('takes usual addresses, trimmed, the domain in lower case', () => {
    assert.equal(parseMailbox('A <a@example.com>'), undefined, 'a display name is a header\'s, never a field\'s');
    assert.equal(parseMailbox(' First.Last+tag@Sub.Example.CO.uk '), 'First.Last+tag@sub.example.co.uk');
    assert.equal(parseMailbox('o\'neil@example.com'), "o'neil@example.com");
    assert.equal(parseMailbox('zoë@exämple.com'), 'zoë@exämple.com');
    assert.equal(loadConfig({ MAIL_FROM: 'Harbor Tea <Orders@Harbor.Example>' }).mail.from, 'Harbor Tea <Orders@harbor.example>');
    assert.equal(loadConfig({ MERCHANT_EMAIL: 'owner@harbor.example' }).mail.merchantEmail, 'owner@harbor.example');
  });

  it('a code limit counts a mailbox: local+tag@domain is local@domain, whatever the case', () => {
    assert.equal(mailboxKey('Ann+Shoes@Example.com'), 'ann@example.com');
    assert.equal(mailboxKey('ann@example.com'), 'ann@example.com');
    assert.equal(mailboxKey('a+b+c@example.com'), 'a@example.com');
  });
});

describe('config refuses text that could rewrite a page or a header', () => {
  it('MAIL_FROM with a display name that breaks a header, and the store\'s texts with control or bidi characters', () => {
    for (const from of ['Store\r\nBcc: x@evil.example <orders@example.com>', '"Store" <orders@example.com>', 'Sto\u202ere <orders@example.com>', ' <orders@example.com>']) {
      assert.throws(() => loadConfig({ MAIL_FROM: from }), (error: unknown) => error instanceof ConfigError && error.variable === 'MAIL_FROM', JSON.stringify(from));
    }
    for (const [variable, value] of [['STORE_NAME', 'Harbor\u001b[2J'], ['STORE_NAME', '\u202eaeT robraH'], ['STORE_DESCRIPTION', 'Tea\u2066 shop'], ['STORE_ADDRESS', '1 Main St;Spring\u200bfield']]) {
      assert.throws(() => loadConfig({ [variable!]: value }), (error: unknown) => error instanceof ConfigError && error.variable === variable, `${variable} ${JSON.stringify(value)}`);
    }
    assert.equal(loadConfig({ STORE_NAME: 'Harbor Tea Co.' }).storeName, 'Harbor Tea Co.');
  });
});
