/**
 * The phone rule without a database (issue 36, build item 6): a phone the checkout takes is a telephone number, stored
 * in E.164; a US number may be written as Americans write it, another country's with + and its code. What is not a
 * number, is too short or too long for its plan, carries text around it or an extension, is refused with a sentence
 * naming the field's fault. A blank phone is no phone given.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePhone } from '../../src/fields/phone.js';
import { fieldFaultSentence, readPersonField } from '../../src/fields/person-fields.js';

describe('the phone rule', () => {
  it('a US number written as people write it is stored in E.164', () => {
    for (const text of ['(415) 555-0100', '415-555-0100', '415.555.0100', '4155550100', '1 415 555 0100', '+1 (415) 555-0100', '+14155550100', ' (415)555-0100 ']) {
      assert.equal(parsePhone(text), '+14155550100', JSON.stringify(text));
    }
  });

  it('a number of a US territory, or of another country written with + and its code, is taken', () => {
    assert.equal(parsePhone('(787) 555-0100'), '+17875550100', 'Puerto Rico');
    assert.equal(parsePhone('+44 20 7946 0958'), '+442079460958');
    assert.equal(parsePhone('+353 1 234 5678'), '+35312345678');
  });

  it('what is not one phone number is refused', () => {
    for (const text of [
      'abc',
      '123',
      '+1 415 555 010',
      '+1 415 555 01000',
      '(123) 456-7890',
      '555-0100',
      '911',
      '020 7946 0958',
      'call (415) 555-0100',
      '(415) 555-0100 or (415) 555-0101',
      '(415) 555-0100 x12',
      '415-555-0100 ext. 12',
      '1-800-FLOWERS',
      '',
    ]) {
      assert.equal(parsePhone(text), undefined, JSON.stringify(text));
    }
  });

  it('the field rule stores the E.164 form, refuses the rest naming its fault, and lets a blank phone through as none', () => {
    assert.deepEqual(readPersonField('phoneNumber', '(415) 555-0100'), { value: '+14155550100' });
    for (const text of ['abc', '123', '+1 415 555 010']) {
      const read = readPersonField('phoneNumber', text);
      assert.deepEqual(read.fault, { field: 'phoneNumber', fault: 'not_a_phone' }, text);
      assert.match(fieldFaultSentence(read.fault!), /^is not a phone number: .*\(415\) 555-0100/);
    }
    assert.deepEqual(readPersonField('phoneNumber', '   '), { value: '   ' });
    // The text rule comes first: a control character is that, not a bad phone.
    assert.equal(readPersonField('phoneNumber', '415\u0000555 0100').fault?.fault, 'control');
    assert.equal(readPersonField('phoneNumber', '4'.repeat(41)).fault?.fault, 'too_long');
  });
});
