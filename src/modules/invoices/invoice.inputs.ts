import { IsOptional, MaxLength } from 'class-validator';
import { ArgsType, Field, ID, InputType, registerEnumType } from 'type-graphql';
import { PageArgs } from '../../core/pagination';
import { InvoiceType } from './invoice.entities';

/** `invoices(...)` filters (docs/api.md: customer_id, subscription_id, type). */
@ArgsType()
export class InvoicesArgs extends PageArgs {
  @Field(() => ID, { nullable: true }) customerId?: string | null;
  @Field(() => ID, { nullable: true }) subscriptionId?: string | null;
  @Field(() => InvoiceType, { nullable: true, description: 'invoice or credit_note' }) type?: InvoiceType | null;
}

/** Why an e-invoice's IRN is cancelled: the portal's four reasons. */
export enum EInvoiceCancelReason {
  DUPLICATE = 'duplicate',
  DATA_ENTRY_MISTAKE = 'data_entry_mistake',
  ORDER_CANCELLED = 'order_cancelled',
  OTHER = 'other',
}
registerEnumType(EInvoiceCancelReason, { name: 'EInvoiceCancelReason' });

/** `cancelEInvoice` (POST /v1/invoices/{id}/e-invoice/cancel). */
@InputType()
export class CancelEInvoiceInput {
  @Field(() => EInvoiceCancelReason, { description: 'duplicate, data_entry_mistake, order_cancelled or other' })
  reason!: EInvoiceCancelReason;
  @Field(() => String, { nullable: true, description: 'A remark for the portal, at most 100 characters' })
  @IsOptional()
  @MaxLength(100)
  remark?: string | null;
}
