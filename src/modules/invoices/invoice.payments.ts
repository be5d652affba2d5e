import type { SnapshotTaxParties } from './invoice.service';

/**
 * What invoicing reads of a one-time payment and of its refund. The payments module sits above invoices (it issues
 * them), so invoices name the fields they need instead of importing its entities; Payment and Refund satisfy these.
 */
export interface InvoicedPayment {
  id: string;
  customerId: string;
  currency: string;
  amount: number;
  referenceId?: string | null;
  taxParties?: SnapshotTaxParties | null;
  /** `inclusive`: `amount` contains its GST (docs/payments.md); absent: exclusive. */
  taxBehavior?: 'exclusive' | 'inclusive';
}

export interface InvoicedRefund {
  id: string;
  amount: number;
  reason?: string | null;
}
