/**
 * GSTINs and GST state codes (src/modules/invoices/gstin.ts): the check character, the state prefix, the case; and the
 * same rules wherever a GSTIN or state code comes in (the operator API, tax settings, a payment's customer).
 */
import { checkGstStateCode, gstinCheckCharacter, normaliseGstin } from '../../src/core/gstin';
import { ADMIN_TOKEN, useHarness } from '../harness';
import { connect } from '../payments/helpers';

describe('the GSTIN rules', () => {
  it('computes the check character of the standard checksum', () => {
    expect(gstinCheckCharacter('27AAPFU0939F1Z')).toBe('V');
    expect(gstinCheckCharacter('29AAGCB7383J1Z')).toBe('4');
    expect(gstinCheckCharacter('29ABCDE1234F1Z')).toBe('W');
  });

  it('accepts valid GSTINs in any case and answers them upper case', () => {
    expect(normaliseGstin('27AAPFU0939F1ZV', 'gstin')).toBe('27AAPFU0939F1ZV');
    expect(normaliseGstin('29aagcb7383j1z4', 'gstin')).toBe('29AAGCB7383J1Z4');
    expect(normaliseGstin(' 29ABCDE1234F1ZW ', 'gstin')).toBe('29ABCDE1234F1ZW');
  });

  it.each([
    ['29ABCDE1234F1Z5', /checksum.*would be W/],
    ['00AAPFU0939F1ZV', /00, which is not a GST state code/],
    ['40ABCDE1234F1ZW', /40, which is not a GST state code/],
    ['27AAPFU0939F1Z', /15-character/],
    ['27AAPFU0939F1ZV1', /15-character/],
    ['27AAPFU0939F1Z-', /15-character/],
  ])('refuses %s', (gstin, why) => {
    expect(() => normaliseGstin(gstin, 'customer_gstin')).toThrow(why);
    try {
      normaliseGstin(gstin, 'customer_gstin');
    } catch (err: any) {
      expect([err.code, err.param]).toEqual(['parameter_invalid', 'customer_gstin']);
    }
  });

  it('knows the state codes: 01 to 38, 97 and 99; nothing else', () => {
    for (const ok of ['01', '27', '38', '97', '99']) expect(checkGstStateCode(ok, 'state_code')).toBe(ok);
    for (const bad of ['00', '39', '96', '98', '1', '001', 'AB', 27])
      expect(() => checkGstStateCode(bad, 'state_code')).toThrow(/GST state code/);
  });
});

describe('GSTINs through the API', () => {
  const h = useHarness();

  it('the operator API and tax settings refuse a wrong check character or state, and keep a lower-case GSTIN upper case', async () => {
    const bad = await h.rest('/v1/admin/merchants', {
      key: ADMIN_TOKEN,
      body: { name: 'Acme', gstin: '29ABCDE1234F1Z5' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'parameter_invalid', param: 'gstin' });
    const zero = await h.rest('/v1/admin/merchants', { key: ADMIN_TOKEN, body: { name: 'Acme', state_code: '00' } });
    expect(zero.body.error).toMatchObject({ code: 'parameter_invalid', param: 'state_code' });

    const m = await h.merchant({ gstin: '29aagcb7383j1z4' });
    const merchant = await m.test.gql('{ merchant { gstin stateCode } }');
    expect(merchant.data.merchant).toEqual({ gstin: '29AAGCB7383J1Z4', stateCode: '29' });
    const wrong = await m.test.post('/merchant/tax-settings', { gstin: '27AAPFU0939F1ZX' });
    expect(wrong.body.error).toMatchObject({ code: 'parameter_invalid', param: 'gstin' });
    const ok = await m.test.post('/merchant/tax-settings', { gstin: '27aapfu0939f1zv' });
    expect(ok.body).toMatchObject({ gstin: '27AAPFU0939F1ZV', state_code: '27' });
  });

  it("a payment's customer GSTIN is checked and stored upper case; a bad one creates nothing", async () => {
    const m = await h.merchant({ gstin: '29AAGCB7383J1Z4' });
    await connect(m.test, 'stripe');
    const base = {
      amount: 49900,
      customer_email: 'gst@example.com',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
    };
    const bad = await m.test.post('/payments', { ...base, customer_gstin: '27AAPFU0939F1ZX' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'parameter_invalid', param: 'customer_gstin' });
    const badState = await m.test.post('/payments', { ...base, customer_state_code: '00' });
    expect(badState.body.error).toMatchObject({ code: 'parameter_invalid', param: 'customer_state_code' });
    expect((await m.test.get('/customers')).body.data).toHaveLength(0);
    const good = await m.test.post('/payments', { ...base, customer_gstin: '27aapfu0939f1zv' });
    expect(good.status).toBe(201);
    const customers = await m.test.get('/customers');
    expect(customers.body.data[0].gstin).toBe('27AAPFU0939F1ZV');
  });
});
