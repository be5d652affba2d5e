import { ArgsType, Field, ID } from 'type-graphql';
import { PageArgs } from '../../core/pagination';
import { InvoiceType } from './invoice.entities';

/** `invoices(...)` filters (docs/api.md: customer_id, subscription_id, type). */
@ArgsType()
export class InvoicesArgs extends PageArgs {
  @Field(() => ID, { nullable: true }) customerId?: string | null;
  @Field(() => ID, { nullable: true }) subscriptionId?: string | null;
  @Field(() => InvoiceType, { nullable: true, description: 'invoice or credit_note' }) type?: InvoiceType | null;
}
