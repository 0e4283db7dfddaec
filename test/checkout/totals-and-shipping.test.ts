/**
 * A checkout's money and its address, without a database (src/checkout/totals.ts, shipping.ts, and the
 * checkout settings in src/config.ts): integer cents, tax by state rounded half up, free standard shipping
 * from the threshold, and the US address rules with every problem named.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { basisPoints, checkoutTotals } from '../../src/checkout/totals.js';
import { formatAddress, readUsAddress, shippingOptions, US_REGIONS } from '../../src/checkout/shipping.js';
import { ConfigError, loadConfig, type CheckoutConfig } from '../../src/config.js';

const checkoutConfig = (overrides: Partial<CheckoutConfig> = {}): CheckoutConfig => ({ ...loadConfig({}).checkout, ...overrides });

const ADDRESS = {
  firstName: 'Ada',
  lastName: 'Lovelace',
  streetAddress: '1 Market St',
  locality: 'San Francisco',
  region: 'CA',
  postalCode: '94105',
  country: 'US',
};

const isCents = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;

describe('totals: integer cents, tax by state in basis points rounded half up', () => {
  it('7.25% of $10.00 is 72.5 cents, rounded half up to 73', () => {
    assert.equal(basisPoints(1000, 725), 73);
  });

  it('rounds below the half down and from the half up, in integers only', () => {
    assert.equal(basisPoints(999, 725), 72); // 72.42750
    assert.equal(basisPoints(1, 5000), 1); // 0.5
    assert.equal(basisPoints(1, 4999), 0); // 0.4999
    assert.equal(basisPoints(3, 5000), 2); // 1.5
    assert.equal(basisPoints(0, 725), 0);
    assert.equal(basisPoints(123_456, 0), 0);
    assert.equal(basisPoints(200, 10_000), 200);
  });

  it('is exact where a float percentage drifts ($1.15 at 50%, large orders)', () => {
    // 1.15 * 0.5 = 0.575 in decimal, 0.57499… in floats: cents and basis points keep the half.
    assert.equal(basisPoints(115, 5000), 58);
    assert.equal(basisPoints(99_999_999, 725), 7_250_000); // 7 249 999.93 -> 7 250 000
    for (let amount = 0; amount < 2000; amount += 7) assert.ok(isCents(basisPoints(amount, 887)), `${amount}`);
  });

  it('tax is charged on the items, not on shipping, at the destination state\'s rate', () => {
    assert.deepEqual(checkoutTotals(1000, 500, 725), { subtotal: 1000, shipping: 500, tax: 73, total: 1573 });
  });

  it('shipping and tax are unknown (not zero) until the option and the state are known, and the total adds what is known', () => {
    assert.deepEqual(checkoutTotals(2599, undefined, undefined), { subtotal: 2599, shipping: undefined, tax: undefined, total: 2599 });
    assert.deepEqual(checkoutTotals(2599, 0, undefined), { subtotal: 2599, shipping: 0, tax: undefined, total: 2599 });
    assert.deepEqual(checkoutTotals(2599, undefined, 0), { subtotal: 2599, shipping: undefined, tax: 0, total: 2599 });
  });

  it('gives exactly one subtotal and one total figure, every figure integer cents, total = subtotal + shipping + tax', () => {
    for (const [subtotal, shipping, rate] of [
      [0, 0, 0],
      [1, 500, 1],
      [1999, 1500, 725],
      [4999, 500, 400],
      [123_457, 0, 1025],
    ] as const) {
      const totals = checkoutTotals(subtotal, shipping, rate);
      assert.deepEqual(Object.keys(totals).sort(), ['shipping', 'subtotal', 'tax', 'total']);
      assert.equal(Object.keys(totals).filter((k) => k === 'subtotal').length, 1);
      assert.equal(Object.keys(totals).filter((k) => k === 'total').length, 1);
      for (const figure of Object.values(totals)) assert.ok(isCents(figure), `${JSON.stringify(totals)}`);
      assert.equal(totals.total, totals.subtotal + totals.shipping! + totals.tax!);
    }
  });
});

describe('TAX_RATES: percent by state in the environment, basis points in the config', () => {
  it('CA=7.25,NY=4 reads as 725 and 400 basis points', () => {
    assert.deepEqual(loadConfig({ TAX_RATES: 'CA=7.25,NY=4' }).checkout.taxRatesBps, { CA: 725, NY: 400 });
  });

  it('one decimal is tenths of a percent, state codes are upper-cased, spaces around entries are allowed', () => {
    assert.deepEqual(loadConfig({ TAX_RATES: ' ca = 7.5 , tx=6.25,' }).checkout.taxRatesBps, { CA: 750, TX: 625 });
    assert.deepEqual(loadConfig({ TAX_RATES: 'OR=0' }).checkout.taxRatesBps, { OR: 0 });
  });

  it('no TAX_RATES means no tax anywhere', () => {
    assert.deepEqual(loadConfig({}).checkout.taxRatesBps, {});
    assert.deepEqual(loadConfig({ TAX_RATES: '' }).checkout.taxRatesBps, {});
  });

  for (const bad of ['CA', 'CA=', 'CA=7.255', 'CA=seven', 'CA=-1', 'CA=100', 'California=7', 'CA=7,25', 'CA:7.25', '7.25']) {
    it(`TAX_RATES="${bad}" stops the configuration with a ConfigError naming TAX_RATES`, () => {
      assert.throws(
        () => loadConfig({ TAX_RATES: bad }),
        (error: unknown) => error instanceof ConfigError && error.variable === 'TAX_RATES' && /^TAX_RATES: /.test(error.message),
      );
    });
  }

  it('shipping amounts and the free-shipping threshold are integer cents from the environment, and bad ones name their variable', () => {
    const config = loadConfig({ SHIPPING_STANDARD_CENTS: '695', SHIPPING_EXPRESS_CENTS: '1995', FREE_SHIPPING_OVER_CENTS: '7500' }).checkout;
    assert.deepEqual([config.standardShippingCents, config.expressShippingCents, config.freeShippingOverCents], [695, 1995, 7500]);
    for (const variable of ['SHIPPING_STANDARD_CENTS', 'SHIPPING_EXPRESS_CENTS', 'FREE_SHIPPING_OVER_CENTS']) {
      assert.throws(() => loadConfig({ [variable]: '6.95' }), (error: unknown) => error instanceof ConfigError && error.variable === variable);
    }
  });
});

describe('shipping options: standard, free from the threshold, and express', () => {
  const config = checkoutConfig({ standardShippingCents: 500, expressShippingCents: 1500, freeShippingOverCents: 5000 });

  it('below the threshold standard costs its price', () => {
    const [standard, express] = shippingOptions(config, 4999);
    assert.deepEqual([standard!.id, standard!.amount, standard!.title], ['standard', 500, 'Standard shipping']);
    assert.deepEqual([express!.id, express!.amount], ['express', 1500]);
  });

  it('from the threshold (inclusive) standard shipping is free and says so; express still costs its price', () => {
    for (const subtotal of [5000, 5001, 1_000_000]) {
      const [standard, express] = shippingOptions(config, subtotal);
      assert.equal(standard!.amount, 0, `${subtotal}`);
      assert.match(standard!.title, /^Free/);
      assert.equal(express!.amount, 1500);
    }
  });

  it('a threshold of 0 means standard shipping is never free', () => {
    assert.equal(shippingOptions(checkoutConfig({ freeShippingOverCents: 0, standardShippingCents: 500 }), 1_000_000)[0]!.amount, 500);
  });

  it('offers exactly the two options, with integer amounts', () => {
    const options = shippingOptions(config, 100);
    assert.deepEqual(options.map((o) => o.id), ['standard', 'express']);
    for (const option of options) assert.ok(isCents(option.amount));
  });
});

describe('US addresses: every problem reported with its field', () => {
  it('a complete US address is read, with the state upper-cased and the optional fields kept', () => {
    const { address, problems } = readUsAddress({ ...ADDRESS, region: 'ca', extendedAddress: 'Suite 5', phoneNumber: '+1 415 555 0100' });
    assert.deepEqual(problems, []);
    assert.deepEqual(address, {
      firstName: 'Ada',
      lastName: 'Lovelace',
      streetAddress: '1 Market St',
      extendedAddress: 'Suite 5',
      locality: 'San Francisco',
      region: 'CA',
      postalCode: '94105',
      country: 'US',
      phoneNumber: '+14155550100',
    });
    assert.deepEqual(formatAddress(address), ['Ada Lovelace', '1 Market St', 'Suite 5', 'San Francisco, CA 94105', 'United States']);
  });

  it('the country may be left out, or given as US or USA in any case; ZIP+4 is accepted', () => {
    for (const country of [undefined, 'US', 'us', 'USA']) {
      assert.deepEqual(readUsAddress({ ...ADDRESS, country: country, postalCode: '94105-1420' }).problems, [], `${country}`);
    }
  });

  it('an empty address reports each missing field: the recipient, street, city, state and ZIP', () => {
    const { address, problems } = readUsAddress({});
    assert.equal(address, undefined);
    assert.deepEqual(
      problems.map((p) => [p.field, p.code]),
      [
        ['firstName', 'missing'],
        ['streetAddress', 'missing'],
        ['locality', 'missing'],
        ['region', 'missing'],
        ['postalCode', 'missing'],
      ],
    );
    for (const problem of problems) assert.ok(problem.content.length > 10);
  });

  for (const field of ['streetAddress', 'locality', 'region', 'postalCode'] as const) {
    it(`leaving out ${field} (or sending blanks or a number) reports that field alone as missing`, () => {
      for (const value of [undefined, '', '   ', 94105]) {
        const { address, problems } = readUsAddress({ ...ADDRESS, [field]: value as string | undefined });
        assert.equal(address, undefined);
        assert.deepEqual(problems.map((p) => [p.field, p.code]), [[field, 'missing']], `${field}=${String(value)}`);
      }
    });
  }

  it('another country is undeliverable, reported on the country', () => {
    for (const country of ['CA', 'Canada', 'GB', 'MX']) {
      const { address, problems } = readUsAddress({ ...ADDRESS, country: country });
      assert.equal(address, undefined);
      assert.deepEqual(problems.map((p) => [p.field, p.code]), [['country', 'address_undeliverable']], country);
      assert.match(problems[0]!.content, /United States/);
    }
  });

  for (const zip of ['9410', '941055', '94105-14', '941051420', 'ABCDE', '94 105']) {
    it(`ZIP "${zip}" is invalid, reported on the postal code`, () => {
      const { address, problems } = readUsAddress({ ...ADDRESS, postalCode: zip });
      assert.equal(address, undefined);
      assert.deepEqual(problems.map((p) => [p.field, p.code]), [['postalCode', 'invalid']]);
    });
  }

  for (const state of ['ZZ', 'California', 'C', 'QC']) {
    it(`state "${state}" is not a US state, reported on the region`, () => {
      const { address, problems } = readUsAddress({ ...ADDRESS, region: state });
      assert.equal(address, undefined);
      assert.deepEqual(problems.map((p) => [p.field, p.code]), [['region', 'invalid']]);
    });
  }

  it("the recipient is the address's name, or the buyer's when the address names nobody; nobody named is missing at firstName", () => {
    const { firstName: _first, lastName: _last, ...place } = ADDRESS;
    const named = (input: Parameters<typeof readUsAddress>[0], buyer?: Parameters<typeof readUsAddress>[1]) => {
      const { address } = readUsAddress(input, buyer);
      return [address?.firstName, address?.lastName];
    };
    assert.deepEqual(named(ADDRESS, { firstName: 'Ann', lastName: 'Lee' }), ['Ada', 'Lovelace'], "the address's own name wins");
    assert.deepEqual(named({ ...place, lastName: 'Lovelace' }, { firstName: 'Ann', lastName: 'Lee' }), [undefined, 'Lovelace'], 'one name of the address is its name');
    assert.deepEqual(named({ ...place, firstName: '  ' }, { firstName: 'Ann', lastName: 'Lee' }), ['Ann', 'Lee'], "a blank name is none: the buyer's");
    assert.deepEqual(named(place, { lastName: 'Lee' }), [undefined, 'Lee']);
    for (const buyer of [undefined, {}, { firstName: ' ', lastName: '' }]) {
      const { address, problems } = readUsAddress(place, buyer);
      assert.equal(address, undefined);
      assert.deepEqual(problems.map((p) => [p.field, p.code]), [['firstName', 'missing']], JSON.stringify(buyer));
      assert.match(problems[0]!.content, /name of the person it goes to/);
    }
  });

  it('a phone is read as E.164; one that is not a phone (stored before the phone rule) is invalid on phoneNumber', () => {
    assert.equal(readUsAddress({ ...ADDRESS, phoneNumber: '(415) 555-0100' }).address?.phoneNumber, '+14155550100');
    assert.equal(readUsAddress({ ...ADDRESS, phoneNumber: '  ' }).address?.phoneNumber, undefined);
    for (const phone of ['abc', '123', '+1 415 555 010']) {
      const { address, problems } = readUsAddress({ ...ADDRESS, phoneNumber: phone });
      assert.equal(address, undefined);
      assert.deepEqual(problems.map((p) => [p.field, p.code]), [['phoneNumber', 'invalid']], phone);
    }
  });

  it('knows the 50 states, DC and the territories', () => {
    assert.equal(US_REGIONS.size, 56);
    for (const code of ['CA', 'NY', 'DC', 'PR', 'WY', 'AK', 'HI']) assert.ok(US_REGIONS.has(code), code);
  });

  it('several problems at once are all reported, not only the first', () => {
    const { problems } = readUsAddress({ country: 'FR', region: 'ZZ', postalCode: '1' });
    assert.deepEqual(problems.map((p) => p.field).sort(), ['country', 'firstName', 'locality', 'postalCode', 'region', 'streetAddress']);
  });
});
