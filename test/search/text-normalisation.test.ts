import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { foldedWords, foldText, htmlToText, indexedWords, isOneEditApart, stem } from '../../src/search/text-normalisation.js';

describe('text normalisation', () => {
  it('folds case and accents, including letters without a decomposition', () => {
    assert.equal(foldText('Café Crème'), 'cafe creme');
    assert.equal(foldText('Straße ÆBLE Øl'), 'strasse aeble ol');
  });

  it('splits words on punctuation and joins apostrophes', () => {
    assert.deepEqual(foldedWords("  Women's LEMON-lime!! "), ['womens', 'lemon', 'lime']);
    assert.deepEqual(foldedWords(' \t!? '), []);
  });

  it('also indexes a hyphenated run as one word, the same for ASCII and other text', () => {
    assert.deepEqual(indexedWords('DS-EL-LL-12 sticks'), ['ds', 'el', 'll', '12', 'dselll12', 'sticks']);
    assert.deepEqual(indexedWords('Crème-Brûlée'), ['creme', 'brulee', 'cremebrulee']);
    assert.deepEqual(indexedWords('lemon-lime – berry, (box)'), indexedWords('lemon-lime - berry, (box)'));
    assert.deepEqual(indexedWords('lemon-lime - berry, (box)'), ['lemon', 'lime', 'lemonlime', 'berry', 'box']);
  });

  it('stems plurals to the singular and leaves other words alone', () => {
    const pairs: [string, string][] = [
      ['sticks', 'stick'],
      ['capsules', 'capsule'],
      ['berries', 'berry'],
      ['cookies', 'cookie'],
      ['boxes', 'box'],
      ['peaches', 'peach'],
      ['glasses', 'glass'],
      ['electrolytes', 'electrolyte'],
    ];
    for (const [plural, singular] of pairs) assert.equal(stem(plural), stem(singular), `${plural} / ${singular}`);
    for (const unchanged of ['citrus', 'glass', 'espresso', 'b12', 'tea']) assert.equal(stem(unchanged), unchanged);
    assert.notEqual(stem('stick'), stem('sticker'));
  });

  it('reads description HTML as a shopper does: block tags separate words, inline tags do not, entities are decoded, scripts dropped', () => {
    const html = '<p>Salt&nbsp;&amp;&nbsp;pepper</p><p>caf&eacute; &#233;clair &#x43;ocoa</p><script>track()</script><!-- note -->';
    assert.deepEqual(foldedWords(htmlToText(html)), ['salt', 'pepper', 'cafe', 'eclair', 'cocoa']);
    assert.deepEqual(foldedWords(htmlToText('<b>lemon</b> <i>lime</i><br>mint<li>sage</li>')), ['lemon', 'lime', 'mint', 'sage']);
    assert.equal(htmlToText('Tear, <b>pour</b>, shake.'), 'Tear, pour, shake.');
  });

  it('knows words one edit apart: insertion, deletion, substitution, swap of neighbours', () => {
    assert.ok(isOneEditApart('capsle', 'capsule'));
    assert.ok(isOneEditApart('capsulee', 'capsule'));
    assert.ok(isOneEditApart('expresso', 'espresso'));
    assert.ok(isOneEditApart('lmeon', 'lemon'));
    assert.ok(!isOneEditApart('lemon', 'lemon'));
    assert.ok(!isOneEditApart('capsl', 'capsule'));
    assert.ok(!isOneEditApart('abc', 'bca'));
  });
});
