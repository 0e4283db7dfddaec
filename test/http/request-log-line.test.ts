/**
 * The completion line written without pino's per-line machinery (src/http/request-log.ts, logCompleted) is the line
 * pino itself writes for the same fields: the same bytes but the time, for a 200 at info and a 5xx at error, paths
 * and addresses with quotes, backslashes, control and non-ASCII characters, and a request without a route; and a
 * level the logger is set above is not written.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { completionLine, logCompleted } from '../../src/http/request-log.js';

function capture(level: string) {
  const lines: string[] = [];
  const logger = pino({ level }, { write: (text: string) => lines.push(text) });
  return { logger, lines };
}

const withoutTime = (text: string) => text.replace(/"time":\d+/, '"time":0');

describe('completion line', () => {
  const cases = [
    completionLine('4b5c-id', 'GET', '/products/decaf-capsules.js', '/products/:handle.js', 200, 0.4567, '198.51.100.7'),
    completionLine('x.1:2', 'GET', '/products/"quoted"\\slash\u0001é☕.js?q=secret', undefined, 404, 12, '"><\u2028'),
    completionLine('id', 'POST', '/cart/add.js', '/cart/add.js', 503, 3.14159, '::1'),
    completionLine('id', 'GET', '/cart/c/SECRET-TOKEN', '/cart/c/:token', 302, 1, '10.0.0.1'),
    completionLine('id', 'GET', '/search/suggest.json', '/search/suggest.json', 200, 0, '2001:db8::1'),
    // Node reads a request line's bytes as latin1: every character below U+0100.
    completionLine('id', 'GET', '/p/\u00ff\u007f\u0080\u00a0.js', undefined, 404, 0.005, '10.0.0.2\t'),
    // response_ms in its forms: whole, one decimal, a leading zero in the hundredths, rounded up to a whole.
    ...[0.1, 0.05, 2.5, 10.049, 99.999, 1234.56, 86_400_000.07, 0.004].map((ms) => completionLine('id', 'GET', '/', null as unknown as undefined, 200, ms, '::1')),
  ];
  it('is the line pino writes for the same fields', () => {
    for (const line of cases) {
      const ours = capture('info');
      const theirs = capture('info');
      logCompleted(ours.logger, line);
      theirs.logger[line.status === 503 ? 'warn' : line.status >= 500 ? 'error' : 'info'](line, 'request completed');
      assert.equal(ours.lines.length, 1);
      assert.equal(withoutTime(ours.lines[0]!), withoutTime(theirs.lines[0]!));
      const parsed = JSON.parse(ours.lines[0]!);
      assert.equal(parsed.level, line.status === 503 ? 40 : line.status >= 500 ? 50 : 30);
      assert.ok(Math.abs(parsed.time - Date.now()) < 60_000);
      assert.ok(!ours.lines[0]!.includes('secret') && !ours.lines[0]!.includes('SECRET'), 'no query and no token');
    }
  });

  it('writes every elapsed time as pino does', () => {
    for (let i = 0; i < 5000; i++) {
      const line = completionLine('id', 'GET', '/', '/', 200, Math.random() * 10 ** (i % 7), '::1');
      const ours = capture('info');
      const theirs = capture('info');
      logCompleted(ours.logger, line);
      theirs.logger.info(line, 'request completed');
      assert.equal(withoutTime(ours.lines[0]!), withoutTime(theirs.lines[0]!));
    }
  });

  it('honours the level: at warn only the 5xx lines are written, at error only a 500 (a 503 is a warning)', () => {
    const failed = completionLine('id', 'GET', '/test/crash', '/test/crash', 500, 1, '::1');
    const atWarn = capture('warn');
    for (const line of [...cases, failed]) logCompleted(atWarn.logger, line);
    assert.deepEqual(
      atWarn.lines.map((text) => [JSON.parse(text).status, JSON.parse(text).level]),
      [
        [503, 40],
        [500, 50],
      ],
    );
    const atError = capture('error');
    for (const line of [...cases, failed]) logCompleted(atError.logger, line);
    assert.deepEqual(
      atError.lines.map((text) => JSON.parse(text).status),
      [500],
    );
  });
});
