import { Arg, Args, Ctx as C, ID, Query, Resolver } from 'type-graphql';
import type { ClassType } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { ConnectionType } from '../../core/pagination';
import { services } from '../../services';
import { Invoice } from './invoice.entities';
import { InvoicesArgs } from './invoice.inputs';
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
}

/** GraphQL for invoices: queries invoice(id), invoices(...), and the field Invoice.pdf (invoice.pdf.ts). */
export const invoiceResolvers: ClassType[] = [InvoiceResolver, InvoicePdfResolver];
