/** Times in the store's zone, the zone always named: its abbreviation where people use one, else its offset. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { momentsIn } from '../../src/markup/moments.js';

const winter = new Date('2026-11-29T14:05:00Z');
const summer = new Date('2026-07-01T14:05:00Z');

describe('momentsIn', () => {
  it('writes date and time in the zone, with its name, winter and summer', () => {
    assert.equal(momentsIn('UTC').moment(winter), '29 November 2026, 14:05 UTC');
    assert.equal(momentsIn('Europe/Berlin').moment(winter), '29 November 2026, 15:05 CET');
    assert.equal(momentsIn('Europe/Berlin').time(summer), '16:05 CEST');
    assert.equal(momentsIn('America/New_York').moment(winter), '29 November 2026, 09:05 EST');
    assert.equal(momentsIn('America/Los_Angeles').time(summer), '07:05 PDT');
    assert.equal(momentsIn('Europe/London').time(summer), '15:05 BST');
    assert.equal(momentsIn('Asia/Kolkata').time(winter), '19:35 GMT+5:30');
  });

  it("a day's key and its date are the zone's calendar day, not UTC's", () => {
    const lateUtc = new Date('2026-11-29T23:30:00Z');
    assert.equal(momentsIn('UTC').dayKey(lateUtc), '2026-11-29');
    assert.equal(momentsIn('Europe/Berlin').dayKey(lateUtc), '2026-11-30');
    assert.equal(momentsIn('Europe/Berlin').day(lateUtc), '30 November 2026');
    assert.equal(momentsIn('America/New_York').dayKey(new Date('2026-11-30T03:00:00Z')), '2026-11-29');
  });
});
