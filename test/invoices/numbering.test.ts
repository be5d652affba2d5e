import { Mode } from '../../src/core/entity';
import { InvoiceStatus, InvoiceType } from '../../src/modules/invoices/invoice.entities';
import { sleep, TestMerchant, useHarness } from '../harness';
import { customer, draft, invoiceService, issue, rows, tenantEm } from './helpers';

/** Numbers are gap-free and sequential per merchant, mode, type and financial year (contract 6, GST rule 46). */

const h = useHarness();

const seq = (n: string) => Number(n.slice(-6));

async function numbers(merchantId: string, mode: Mode, type: InvoiceType): Promise<string[]> {
  const r = await rows<{ number: string }>(h, 'select number from invoices where merchant_id = ? and mode = ? and type = ? order by number', [merchantId, mode, type]);
  return r.map((x) => x.number);
}

describe('numbering', () => {
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant({ gstin: '29ABCDE1234F1Z5' });
  });

  it('runs 1, 2, 3 per mode and type, each with its own format', async () => {
    const c = await customer(h, m.id);
    const cLive = await customer(h, m.id, {}, Mode.LIVE);
    const a = await issue(h, m.id, draft(c));
    const b = await issue(h, m.id, draft(c));
    const cn = await issue(h, m.id, draft(c, { type: InvoiceType.CREDIT_NOTE, status: InvoiceStatus.ISSUED }));
    const live = await issue(h, m.id, draft(cLive), Mode.LIVE);
    const liveCn = await issue(h, m.id, draft(cLive, { type: InvoiceType.CREDIT_NOTE, status: InvoiceStatus.ISSUED }), Mode.LIVE);
    expect([a.number, b.number, cn.number, live.number, liveCn.number]).toEqual([
      'TINV-2627-000001', 'TINV-2627-000002', 'TCN-2627-000001', 'INV-2627-000001', 'CN-2627-000001',
    ]);
    for (const inv of [a, b, cn, live, liveCn]) expect(inv.number.length).toBeLessThanOrEqual(16);
  });

  it('restarts at April 1 00:00 IST: March 31 23:59 IST is still the old financial year', async () => {
    const c = await customer(h, m.id);
    const march = await issue(h, m.id, draft(c, { issuedAt: new Date('2027-03-31T18:29:00Z') })); // 23:59 IST
    const april = await issue(h, m.id, draft(c, { issuedAt: new Date('2027-03-31T18:30:00Z') })); // 00:00 IST, April 1
    const april2 = await issue(h, m.id, draft(c, { issuedAt: new Date('2027-04-02T00:00:00Z') }));
    expect(march.number).toBe('TINV-2627-000003');
    expect(april.number).toBe('TINV-2728-000001');
    expect(april2.number).toBe('TINV-2728-000002');
    const [s] = await rows(h, `select last_number from invoice_sequences where merchant_id = ? and mode = 'test' and type = 'invoice' and financial_year = 2027`, [m.id]);
    expect(s.last_number).toBe(2);
  });

  it('a rolled-back issue gives its number back', async () => {
    const c = await customer(h, m.id);
    const before = await numbers(m.id, Mode.TEST, InvoiceType.INVOICE);
    let taken = '';
    await expect(
      tenantEm(h, m.id).transactional(async (em) => {
        taken = (await invoiceService(h).issue(em, draft(c))).number;
        throw new Error('caller fails after issuing');
      }),
    ).rejects.toThrow('caller fails');
    expect(taken).toBe('TINV-2627-000004');
    expect(await numbers(m.id, Mode.TEST, InvoiceType.INVOICE)).toEqual(before);
    expect((await issue(h, m.id, draft(c))).number).toBe('TINV-2627-000004');
  });

  it('under concurrency: 30 issues in separate transactions, a third rolled back on purpose, commit exactly 1..n', async () => {
    const fresh = await h.merchant({ gstin: '27AAPFU0939F1ZV' });
    const c = await customer(h, fresh.id, { stateCode: '27' });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) =>
        tenantEm(h, fresh.id).transactional(async (em) => {
          await sleep(Math.floor(Math.random() * 5));
          const inv = await invoiceService(h).issue(em, draft(c, { lines: [{ description: `n${i}`, quantity: 1, unitAmount: 100 + i, amount: 100 + i }] }));
          await sleep(Math.floor(Math.random() * 5)); // hold the sequence row a little while others queue on it
          if (i % 3 === 0) throw new Error('rolled back on purpose');
          return inv.number;
        }),
      ),
    );
    const committed = outcomes.filter((o): o is PromiseFulfilledResult<string> => o.status === 'fulfilled').map((o) => o.value);
    const failed = outcomes.filter((o) => o.status === 'rejected') as PromiseRejectedResult[];
    expect(failed).toHaveLength(10);
    for (const f of failed) expect(String(f.reason)).toContain('rolled back on purpose');
    expect(committed).toHaveLength(20);
    const stored = await numbers(fresh.id, Mode.TEST, InvoiceType.INVOICE);
    expect(stored.sort()).toEqual([...committed].sort());
    expect(stored.map(seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(new Set(stored).size).toBe(20);
    const [s] = await rows(h, `select last_number from invoice_sequences where merchant_id = ? and mode = 'test' and type = 'invoice'`, [fresh.id]);
    expect(s.last_number).toBe(20);
  });
});
