import { Arg, Args, Ctx as C, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { ClassType } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { ConnectionType } from '../../core/pagination';
import { services } from '../../services';
import { Invoice } from './invoice.entities';
import { CancelEInvoiceInput, InvoicesArgs } from './invoice.inputs';
import { InvoicePdfResolver } from './invoice.pdf.resolver';

export const InvoiceConnection = ConnectionType(Invoice);

@Resolver(() => Invoice)
export class InvoiceResolver {
  @Query(() => Invoice, { description: 'An invoice or credit note, with its line items.' })
  invoice(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).invoices.invoice(ctx, id);
  }

  @Query(() => InvoiceConnection, { description: 'Invoices and credit notes, newest first.' })
  invoices(@C() ctx: Ctx, @Args() args: InvoicesArgs) {
    return services(ctx).invoices.invoices(ctx, args);
  }

  @Mutation(() => Invoice, {
    description:
      'Send a failed e-invoice registration to the invoice registration portal again (docs/india.md); 409 unless it failed.',
  })
  retryEInvoice(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return eInvoicing(ctx).retry(ctx, id);
  }

  @Mutation(() => Invoice, {
    description:
      "Cancel a registered e-invoice's IRN at the portal, within 24 hours of its acknowledgement (merchant time); the document itself stands.",
  })
  cancelEInvoice(@C() ctx: Ctx, @Arg('id', () => ID) id: string, @Arg('input') input: CancelEInvoiceInput) {
    return eInvoicing(ctx).cancel(ctx, id, input.reason, input.remark);
  }
}

function eInvoicing(ctx: Ctx) {
  const e = services(ctx).invoices.eInvoicing;
  if (!e) throw new Error('e-invoicing is not set up in this process');
  return e;
}

/** GraphQL for invoices: queries invoice(id), invoices(...), and the field Invoice.pdf (invoice.pdf.ts). */
export const invoiceResolvers: ClassType[] = [InvoiceResolver, InvoicePdfResolver];
