/**
 * A URL whose path's percent-encoding is not valid goes through the one pipeline: a JSON 400 with its request id and
 * the headers every answer carries, counted by the rate limit like any request.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { rewriteBadUrl } from '../../src/app.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

describe('URLs the router cannot decode', () => {
  it('rewriteBadUrl keeps every URL whose path decodes, and reroutes the others', () => {
    for (const url of ['/', '/products/espresso-capsules.js', '/search?q=%zz', '/search?q=caf%C3%A9', '/products/caf%C3%A9', '/a%20b']) assert.equal(rewriteBadUrl(url), url, url);
    for (const url of ['/%zz', '/products/%zz.js', '/products/%C0.js?x=1', '/cart/c/%E0%A4%A']) assert.notEqual(rewriteBadUrl(url), url, url);
  });

  for (const backend of backends.slice(0, 1)) {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend, { config: { rateLimit: true } });
    });
    after(() => t.close());

    it('answer a JSON 400 with a request id and the headers of every answer', async () => {
      for (const url of ['/%zz', '/products/%zz.js', '/products/%C0', '/collections/%E0%A4%A/products.json']) {
        const answer = await t.app.inject({ method: 'GET', url });
        assert.equal(answer.statusCode, 400, url);
        assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8', url);
        assert.deepEqual(answer.json(), { status: 400, message: 'Bad request', description: 'The URL is not valid.' }, url);
        assert.match(String(answer.headers['x-request-id']), /^[0-9a-f-]{36}$/, url);
        assert.equal(answer.headers['x-content-type-options'], 'nosniff', url);
      }
    });

    it('are counted by the rate limit: with the budget spent, they answer 429 like any request', async () => {
      const from = { remoteAddress: '198.51.100.77' };
      let limited = 0;
      for (let i = 0; i < 400 && limited === 0; i++) {
        const answer = await t.app.inject({ method: 'GET', url: '/%zz', ...from });
        if (answer.statusCode === 429) limited++;
        else assert.equal(answer.statusCode, 400);
      }
      assert.equal(limited, 1, 'the bad URLs spent a budget');
    });
  }
});
