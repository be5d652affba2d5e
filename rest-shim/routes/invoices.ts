import type { Route } from '../routes';

/** Invoices and credit notes (src/modules/invoices). */
export const INVOICE_ROUTES: Route[] = [];
