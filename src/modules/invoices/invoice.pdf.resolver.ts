import { Ctx as C, Field, FieldResolver, ObjectType, Resolver, Root } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { PDF_COST } from '../../core/operation-cost';
import { services } from '../../services';
import { Invoice } from './invoice.entities';
import { pdfFilename } from './invoice.pdf';

@ObjectType({ description: 'A rendered document, base64-encoded.' })
export class InvoiceDocument {
  @Field({ description: 'e.g. INV-2026-000001.pdf' }) filename!: string;
  @Field({ description: 'application/pdf' }) contentType!: string;
  @Field({ description: "The file's bytes, base64-encoded." }) base64!: string;
}

/** `Invoice.pdf`: rendered once from the issued document and kept (invoice.documents.ts); one per request at most. */
@Resolver(() => Invoice)
export class InvoicePdfResolver {
  @FieldResolver(() => InvoiceDocument, {
    description: 'The GST tax invoice or credit note as an A4 PDF (rule 46 fields). At most one per request.',
    complexity: PDF_COST,
  })
  pdf(@C() ctx: Ctx, @Root() invoice: Invoice): Promise<InvoiceDocument> {
    return invoicePdf(ctx, invoice);
  }
}

/** The invoice's PDF as the API answers it (Invoice.pdf, and the customer portal's documents). */
export async function invoicePdf(ctx: Ctx, invoice: Invoice): Promise<InvoiceDocument> {
  const bytes = await services(ctx).documents.pdf(ctx, invoice);
  return Object.assign(new InvoiceDocument(), {
    filename: pdfFilename(invoice.number),
    contentType: 'application/pdf',
    base64: bytes.toString('base64'),
  });
}
