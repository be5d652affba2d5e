import { Mode } from '../../src/core/entity';
import { Invoice, InvoiceStatus, InvoiceType } from '../../src/modules/invoices/invoice.entities';
import { sleep, TestMerchant, useHarness } from '../harness';
import { formatInvoiceNumber } from '../../src/modules/invoices/invoice.numbering';
import { outbox } from '../payments/helpers';
import { customer, draft, invoiceService, issue, rows, tenantEm } from './helpers';

/**
 * Numbers are gap-free and sequential per merchant, mode, type and financial year (docs/invoices-and-gst.md, GST rule
 * 46).
 */

const h = useHarness();

const seq = (n: string) => Number(n.slice(-6));

async function numbers(merchantId: string, mode: Mode, type: InvoiceType): Promise<string[]> {
  const r = await rows<{ number: string }>(
    h,
    'select number from invoices where merchant_id = ? and mode = ? and type = ? order by number',
    [merchantId, mode, type],
  );
  return r.map((x) => x.number);
}

describe('numbering', () => {
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant({ gstin: '29ABCDE1234F1ZW' });
  });

  it('runs 1, 2, 3 per mode and type, each with its own format', async () => {
    const c = await customer(h, m.id);
    const cLive = await customer(h, m.id, {}, Mode.LIVE);
    const a = await issue(h, m.id, draft(c));
    const b = await issue(h, m.id, draft(c));
    const cn = await issue(h, m.id, draft(c, { type: InvoiceType.CREDIT_NOTE, status: InvoiceStatus.ISSUED }));
    const live = await issue(h, m.id, draft(cLive), Mode.LIVE);
    const liveCn = await issue(
      h,
      m.id,
      draft(cLive, { type: InvoiceType.CREDIT_NOTE, status: InvoiceStatus.ISSUED }),
      Mode.LIVE,
    );
    expect([a.number, b.number, cn.number, live.number, liveCn.number]).toEqual([
      'TINV-2627-000001',
      'TINV-2627-000002',
      'TCN-2627-000001',
      'INV-2627-000001',
      'CN-2627-000001',
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
    const [s] = await rows(
      h,
      `select last_number from invoice_sequences where merchant_id = ? and mode = 'test' and type = 'invoice' and financial_year = 2027`,
      [m.id],
    );
    expect(s.last_number).toBe(2);
  });

  it('a rolled-back issue gives its number back', async () => {
    const c = await customer(h, m.id);
    const before = await numbers(m.id, Mode.TEST, InvoiceType.INVOICE);
    let issued: Invoice | null = null;
    await expect(
      tenantEm(h, m.id).transactional(async (em) => {
        issued = await invoiceService(h).issue(em, draft(c));
        throw new Error('caller fails after issuing');
      }),
    ).rejects.toThrow('caller fails');
    // The number is given as the transaction commits: this one never did, so it took none.
    expect(issued!.number).toBeNull();
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
          const inv = await invoiceService(h).issue(
            em,
            draft(c, { lines: [{ description: `n${i}`, quantity: 1, unitAmount: 100 + i, amount: 100 + i }] }),
          );
          await sleep(Math.floor(Math.random() * 5)); // commit (and number) in a random order
          if (i % 3 === 0) throw new Error('rolled back on purpose');
          return inv;
        }),
      ),
    );
    // Numbered by the commit: read once the transaction has answered.
    const committed = outcomes
      .filter((o): o is PromiseFulfilledResult<Invoice> => o.status === 'fulfilled')
      .map((o) => o.value.number);
    const failed = outcomes.filter((o) => o.status === 'rejected') as PromiseRejectedResult[];
    expect(failed).toHaveLength(10);
    for (const f of failed) expect(String(f.reason)).toContain('rolled back on purpose');
    expect(committed).toHaveLength(20);
    const stored = await numbers(fresh.id, Mode.TEST, InvoiceType.INVOICE);
    expect(stored.sort()).toEqual([...committed].sort());
    expect(stored.map(seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(new Set(stored).size).toBe(20);
    const [s] = await rows(
      h,
      `select last_number from invoice_sequences where merchant_id = ? and mode = 'test' and type = 'invoice'`,
      [fresh.id],
    );
    expect(s.last_number).toBe(20);
  });

  it('several in one transaction: consecutive in issue order, each type on its own sequence, events carry the numbers', async () => {
    const fresh = await h.merchant({ gstin: '27AAPFU0939F1ZV' });
    const c = await customer(h, fresh.id, { stateCode: '27' });
    const [a, cn, b, paid] = await tenantEm(h, fresh.id).transactional(async (em) => {
      const s = invoiceService(h);
      const issued = [
        await s.issue(em, draft(c)),
        await s.issue(em, draft(c, { type: InvoiceType.CREDIT_NOTE, status: InvoiceStatus.ISSUED })),
        await s.issue(em, draft(c)),
        await s.issue(em, draft(c, { status: InvoiceStatus.PAID })),
      ];
      // Not numbered before the commit.
      expect(issued.map((i) => i.number)).toEqual([null, null, null, null]);
      return issued;
    });
    expect([a.number, b.number, paid.number, cn.number]).toEqual([
      'TINV-2627-000001',
      'TINV-2627-000002',
      'TINV-2627-000003',
      'TCN-2627-000001',
    ]);
    // Every event about them was written with the number, in the order they were recorded.
    const events = (await outbox(h.app, fresh.id)).filter(
      (e) => e.type.startsWith('invoice.') || e.type.startsWith('credit_note.'),
    );
    expect(events.map((e) => `${e.type}:${e.payload.data.object.number}`)).toEqual([
      'invoice.created:TINV-2627-000001',
      'credit_note.created:TCN-2627-000001',
      'invoice.created:TINV-2627-000002',
      'invoice.created:TINV-2627-000003',
      'invoice.paid:TINV-2627-000003',
    ]);
    expect(await numbers(fresh.id, Mode.TEST, InvoiceType.INVOICE)).toEqual([
      'TINV-2627-000001',
      'TINV-2627-000002',
      'TINV-2627-000003',
    ]);
  });

  it("an invoice issued in a savepoint that rolls back takes no number: the transaction's others stay gap-free", async () => {
    const fresh = await h.merchant();
    const c = await customer(h, fresh.id);
    const s = invoiceService(h);
    const [first, dropped, second] = await tenantEm(h, fresh.id).transactional(async (em) => {
      const a = await s.issue(em, draft(c));
      let inner: Invoice | null = null;
      await em
        .transactional(async (nested) => {
          inner = await s.issue(nested, draft(c, { status: InvoiceStatus.PAID }));
          throw new Error('the savepoint rolls back');
        })
        .catch(() => undefined);
      const b = await s.issue(em, draft(c));
      return [a, inner as Invoice | null, b];
    });
    expect([first.number, dropped?.number, second.number]).toEqual(['TINV-2627-000001', null, 'TINV-2627-000002']);
    expect(await numbers(fresh.id, Mode.TEST, InvoiceType.INVOICE)).toEqual(['TINV-2627-000001', 'TINV-2627-000002']);
    const events = (await outbox(h.app, fresh.id)).filter((e) => e.type.startsWith('invoice.'));
    expect(events.map((e) => `${e.type}:${e.payload.data.object.number}`)).toEqual([
      'invoice.created:TINV-2627-000001',
      'invoice.created:TINV-2627-000002',
    ]);
  });

  it('numbers past 999,999 as formatInvoiceNumber does (dashes dropped to stay within 16 characters)', async () => {
    const fresh = await h.merchant();
    const c = await customer(h, fresh.id);
    const cLive = await customer(h, fresh.id, {}, Mode.LIVE);
    const seqAt = (mode: Mode, last: number) =>
      rows(
        h,
        `insert into invoice_sequences (merchant_id, mode, type, financial_year, last_number) values (?, ?, 'invoice', 2026, ?)
               on conflict (merchant_id, mode, type, financial_year) do update set last_number = excluded.last_number`,
        [fresh.id, mode, last],
      );
    const got: string[] = [];
    const want: string[] = [];
    for (const [mode, last, cust] of [
      [Mode.TEST, 999_998, c],
      [Mode.TEST, 9_999_999, c],
      [Mode.LIVE, 9_999_998, cLive],
    ] as const) {
      await seqAt(mode, last);
      for (let k = 1; k <= 2; k++) {
        got.push((await issue(h, fresh.id, draft(cust), mode)).number);
        want.push(formatInvoiceNumber(InvoiceType.INVOICE, mode, 2026, last + k));
      }
    }
    expect(got).toEqual(want);
    expect(got).toEqual([
      'TINV-2627-999999',
      'TINV2627-1000000',
      'TINV262710000000',
      'TINV262710000001',
      'INV-2627-9999999',
      'INV2627-10000000',
    ]);
  });

  it('a transaction that would commit an invoice without a number is refused (whatever wrote it)', async () => {
    const c = await customer(h, m.id);
    const id = '0190a0a0-0000-7000-8000-000000000001';
    const knex = (h.app.orm.em.getConnection() as unknown as { getKnex(): any }).getKnex();
    await expect(
      knex.transaction((trx: any) =>
        trx.raw(
          `insert into invoices (id, merchant_id, mode, type, number, billing_reason, status, customer_id, currency, subtotal, total, amount_due, line_items, supplier, recipient, issued_at)
           values (?, ?, 'test', 'invoice', null, 'one_time', 'open', ?, 'INR', 100, 100, 100, '[]', '{}', '{}', now())`,
          [id, m.id, c],
        ),
      ),
    ).rejects.toThrow(/without a number/);
    expect(await rows(h, 'select id from invoices where id = ?', [id])).toEqual([]);
  });
});
