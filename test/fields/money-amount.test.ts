/**
 * The one rule for an amount a person types (src/fields/money-amount.ts), which the terminal's AMOUNT and the admin's
 * capture and refund fields share: dollars and cents to integer cents, read from the digits; anything else is no amount.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDollars } from '../../src/fields/money-amount.js';

describe('an amount typed in dollars and cents', () => {
  it('becomes integer cents, with or without the dollar sign, cents or spaces around it', () => {
    assert.equal(parseDollars('12.50'), 1250);
    assert.equal(parseDollars('$12.50'), 1250);
    assert.equal(parseDollars('12'), 1200);
    assert.equal(parseDollars('0.5'), 50);
    assert.equal(parseDollars(' 0.07 '), 7);
    assert.equal(parseDollars('0'), 0);
    assert.equal(parseDollars('999999999.99'), 99_999_999_999);
  });

  it('is no amount when it is not dollars and cents', () => {
    for (const text of ['', '12.345', '-5', '1e3', '12,50', '1,250.00', 'twelve', '$', '.50', '12.', '1234567890', 'NaN', '0x10']) {
      assert.equal(parseDollars(text), undefined, JSON.stringify(text));
    }
  });
});
