import { BigIntType, Entity, Enum, Index, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { Mode, TenantEntity } from '../../core/entity';
import { DateTime, Money } from '../../core/scalars';

export enum InvoiceType {
  INVOICE = 'invoice',
  CREDIT_NOTE = 'credit_note',
}
export enum BillingReason {
  SUBSCRIPTION_CREATE = 'subscription_create',
  SUBSCRIPTION_CYCLE = 'subscription_cycle',
  SUBSCRIPTION_UPDATE = 'subscription_update',
  ONE_TIME = 'one_time',
  /** A credit note for a refund of the payment its related invoice records. */
  REFUND = 'refund',
}
export enum InvoiceStatus {
  OPEN = 'open',
  PAID = 'paid',
  VOID = 'void',
  UNCOLLECTIBLE = 'uncollectible',
  /** Credit notes. */
  ISSUED = 'issued',
}
/**
 * A document's registration with the invoice registration portal (docs/india.md, "E-invoicing"); null on documents
 * that are not e-invoices (the merchant's e-invoicing is off, the recipient has no GSTIN, or not INR).
 */
export enum EInvoiceStatus {
  /** Issued; its registration is written as a durable command and tried until it goes through. */
  PENDING = 'pending',
  REGISTERED = 'registered',
  /** The portal refused it, or it did not go through in time: the document stands, and can be sent again. */
  FAILED = 'failed',
  /** Its IRN was cancelled at the portal (within 24 hours of registration). */
  CANCELLED = 'cancelled',
}
registerEnumType(EInvoiceStatus, { name: 'EInvoiceStatus' });
registerEnumType(InvoiceType, { name: 'InvoiceType' });
registerEnumType(BillingReason, { name: 'BillingReason' });
registerEnumType(InvoiceStatus, { name: 'InvoiceStatus' });

@ObjectType({ description: 'One line of an invoice, with its share of each tax head.' })
export class InvoiceLineItem {
  @Field() description!: string;
  @Field(() => Int) quantity!: number;
  @Field(() => Money) unitAmount!: number;
  @Field(() => Money) amount!: number;
  /** ISO 8601 (the lines live in jsonb, where dates are strings). */
  @Field(() => DateTime, { nullable: true }) periodStart?: string | null;
  @Field(() => DateTime, { nullable: true }) periodEnd?: string | null;
  @Field() proration!: boolean;
  /** Fixed at issue: the merchant's SAC code then (null: it had none); the PDF prints exactly this. */
  @Field(() => String, {
    nullable: true,
    description: "The SAC the line was issued with (the merchant's sac_code at issue; null: none).",
  })
  hsnSac?: string | null;
  @Field(() => Money) cgstAmount!: number;
  @Field(() => Money) sgstAmount!: number;
  @Field(() => Money) igstAmount!: number;
}

/**
 * The supplier as an issued document states it (docs/invoices-and-gst.md "Issued documents are final"): the merchant's
 * name and address at issue, and the GSTIN and state the document was taxed under. Kept in the invoice's row (jsonb),
 * never read again from the merchant.
 */
@ObjectType({
  description: "The supplier as the document was issued: the merchant's name, GSTIN, state and address at issue.",
})
export class InvoiceSupplier {
  @Field() name!: string;
  @Field(() => String, { nullable: true }) gstin!: string | null;
  /** 2-digit GST state code. */
  @Field(() => String, { nullable: true }) stateCode!: string | null;
  @Field(() => String, { nullable: true }) address!: string | null;
}

/** The recipient as an issued document states it: the customer's details at issue (jsonb, never read again). */
@ObjectType({
  description:
    "The recipient as the document was issued: the customer's name, e-mail, GSTIN, state and address at issue.",
})
export class InvoiceRecipient {
  @Field(() => String, { nullable: true }) name!: string | null;
  @Field(() => String, { nullable: true }) email!: string | null;
  @Field(() => String, { nullable: true }) gstin!: string | null;
  /** 2-digit GST state code. */
  @Field(() => String, { nullable: true }) stateCode!: string | null;
  /** The customer's address at issue (null: it had none). */
  @Field(() => String, { nullable: true }) address!: string | null;
}

/**
 * A GST tax invoice or credit note (docs/invoices-and-gst.md); numbers are gap-free per merchant, mode, type and
 * financial year.
 */
@Entity({ tableName: 'invoices' })
@Unique({ properties: ['merchantId', 'mode', 'type', 'number'] })
@Index({ properties: ['merchantId', 'mode', 'customerId', 'id'] })
@Index({ properties: ['merchantId', 'mode', 'subscriptionId', 'id'] })
@ObjectType({ description: 'A GST tax invoice or credit note.' })
export class Invoice extends TenantEntity {
  @Field()
  get object(): string {
    return 'invoice';
  }

  @Field(() => InvoiceType) @Enum({ items: () => InvoiceType }) type!: InvoiceType;
  /**
   * GST rule 46: at most 16 characters, unique per financial year. Given as the issuing transaction commits (null in
   * it until then: invoice.service.ts numberInvoicesAtCommit); a committed invoice always has one.
   */
  @Field() @Property({ length: 16, nullable: true }) number!: string;
  @Field(() => BillingReason) @Enum({ items: () => BillingReason }) billingReason!: BillingReason;
  @Field(() => InvoiceStatus) @Enum({ items: () => InvoiceStatus }) status!: InvoiceStatus;
  @Field(() => ID) @Property({ type: 'uuid' }) customerId!: string;
  @Field(() => ID, { nullable: true }) @Property({ type: 'uuid', nullable: true }) subscriptionId?: string | null;
  @Field(() => ID, { nullable: true }) @Property({ type: 'uuid', nullable: true }) paymentId?: string | null;
  @Field() @Property({ length: 3 }) currency!: string;
  @Field(() => Money) @Property({ type: new BigIntType('number') }) subtotal!: number;
  @Field(() => Money) @Property({ type: new BigIntType('number') }) cgstAmount: number = 0;
  @Field(() => Money) @Property({ type: new BigIntType('number') }) sgstAmount: number = 0;
  @Field(() => Money) @Property({ type: new BigIntType('number') }) igstAmount: number = 0;
  @Field(() => Money) @Property({ type: new BigIntType('number') }) taxAmount: number = 0;
  @Field(() => Money) @Property({ type: new BigIntType('number') }) total!: number;
  /** A coupon's discount taken off the lines (tax-exclusive; also shown as a negative line); `subtotal` is after it. */
  @Field(() => Money, {
    description: "A coupon's discount taken off the lines (tax-exclusive; also a negative line); subtotal is after it.",
  })
  @Property({ type: new BigIntType('number') })
  discountAmount: number = 0;
  /** Credit from earlier credit notes applied to this invoice (reduces amount_due). */
  @Field(() => Money) @Property({ type: new BigIntType('number') }) creditApplied: number = 0;
  @Field(() => Money) @Property({ type: new BigIntType('number') }) amountPaid: number = 0;
  /** The sum of the totals of the credit notes naming this invoice (`relatedInvoiceId`); never above `total`. */
  @Field(() => Money, {
    description:
      'The sum of the totals of the credit notes issued against this invoice; never more than total (0 on a credit note).',
  })
  @Property({ type: new BigIntType('number'), default: 0 })
  amountCredited: number = 0;
  @Field(() => Money) @Property({ type: new BigIntType('number') }) amountDue!: number;
  @Field(() => Int) @Property() taxRateBps: number = 0;
  /** 2-digit state code of the place of supply (the customer's state, else the merchant's). */
  @Field(() => String, { nullable: true }) @Property({ length: 2, nullable: true }) placeOfSupply?: string | null;
  @Field(() => String, { nullable: true }) @Property({ length: 15, nullable: true }) supplierGstin?: string | null;
  @Field(() => String, { nullable: true }) @Property({ length: 15, nullable: true }) customerGstin?: string | null;
  /**
   * The parties as they were at issue (docs/invoices-and-gst.md): the PDF prints these, never the merchant's or
   * customer's records.
   */
  @Field(() => InvoiceSupplier, {
    description: 'The supplier as it was at issue (final: later settings change no issued document).',
  })
  @Property({ type: 'jsonb' })
  supplier!: InvoiceSupplier;
  @Field(() => InvoiceRecipient, {
    description: 'The recipient as it was at issue (final: later customer changes change no issued document).',
  })
  @Property({ type: 'jsonb' })
  recipient!: InvoiceRecipient;
  @Field(() => [InvoiceLineItem]) @Property({ type: 'jsonb' }) lineItems: InvoiceLineItem[] = [];
  /** A credit note's original invoice (a refund's: the invoice of the payment; a plan change's: the credited period's). */
  @Field(() => ID, { nullable: true }) @Property({ type: 'uuid', nullable: true }) relatedInvoiceId?: string | null;
  /** A refund's credit note: the refund it documents. */
  @Field(() => ID, { nullable: true, description: "A refund's credit note: the refund it documents." })
  @Property({ type: 'uuid', nullable: true })
  refundId?: string | null;
  @Field(() => DateTime, { nullable: true })
  @Property({ type: 'timestamptz', nullable: true })
  periodStart?: Date | null;
  @Field(() => DateTime, { nullable: true }) @Property({ type: 'timestamptz', nullable: true }) periodEnd?: Date | null;
  /** Merchant time (the test clock in test mode). */
  @Field(() => DateTime) @Property({ type: 'timestamptz' }) issuedAt!: Date;
  @Field(() => DateTime, { nullable: true }) @Property({ type: 'timestamptz', nullable: true }) paidAt?: Date | null;
  /** Collection, not document: filled in when the gateway asks the customer to authenticate the debit. */
  @Field(() => String, {
    nullable: true,
    description:
      "The gateway's page where the customer authenticates this invoice's debit (a mandate debit above the limit, docs/india.md)",
  })
  @Property({ type: 'text', nullable: true })
  hostedAuthenticationUrl?: string | null;
  @Field(() => DateTime, {
    nullable: true,
    description: 'When the gateway first asked the customer to authenticate the debit',
  })
  @Property({ type: 'timestamptz', nullable: true })
  authenticationRequiredAt?: Date | null;

  // E-invoicing (docs/india.md, "E-invoicing"): the registration of the issued document, not the document itself.
  @Field(() => EInvoiceStatus, {
    nullable: true,
    description:
      'Its registration with the invoice registration portal: pending, registered, failed or cancelled; null when it is not an e-invoice',
  })
  @Enum({ items: () => EInvoiceStatus, nullable: true })
  eInvoiceStatus?: EInvoiceStatus | null;
  @Field(() => String, {
    nullable: true,
    description:
      'Invoice reference number: SHA-256 (64 hex) of "<supplier GSTIN>/<financial year, 2026-27>/<INV or CRN>/<number>"',
  })
  @Property({ length: 64, nullable: true })
  irn?: string | null;
  @Field(() => String, { nullable: true, description: "The portal's acknowledgement number" })
  @Property({ type: 'text', nullable: true })
  ackNo?: string | null;
  @Field(() => DateTime, { nullable: true, description: "The portal's acknowledgement time" })
  @Property({ type: 'timestamptz', nullable: true })
  ackDate?: Date | null;
  @Field(() => String, {
    nullable: true,
    description: "The portal's signed QR code content (a compact JWS); the PDF prints it as a QR code",
  })
  @Property({ type: 'text', nullable: true })
  signedQr?: string | null;
  @Field(() => String, { nullable: true, description: 'Why the last registration attempt failed' })
  @Property({ type: 'text', nullable: true })
  eInvoiceError?: string | null;
  @Field(() => DateTime, { nullable: true, description: 'When its IRN was cancelled at the portal' })
  @Property({ type: 'timestamptz', nullable: true })
  eInvoiceCancelledAt?: Date | null;
}

/**
 * The last number issued per merchant, mode, invoice type and financial year. Taken with a row lock in the
 * transaction that writes the invoice: a rollback gives the number back, so numbers have no gaps.
 */
@Entity({ tableName: 'invoice_sequences' })
export class InvoiceSequence {
  @PrimaryKey({ type: 'uuid' }) merchantId!: string;
  @PrimaryKey({ type: 'text' }) mode!: Mode;
  @PrimaryKey({ type: 'text' }) type!: InvoiceType;
  /** e.g. 2026 for FY 2026-27 (April to March). */
  @PrimaryKey({ type: 'integer' }) financialYear!: number;
  @Property({ type: 'integer' }) lastNumber!: number;
}
