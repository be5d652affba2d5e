/** GraphQL for invoices (queries invoice(id), invoices(...)). */
export const invoiceResolvers: Function[] = [];
