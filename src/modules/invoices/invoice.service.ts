import type { Serializer } from '../../core/serialize';

/** Invoices and credit notes: GST, gap-free numbers, issue and settle (contract 6 and 11). */
export class InvoiceService {
  constructor(private readonly serializer: () => Serializer) {}
}
