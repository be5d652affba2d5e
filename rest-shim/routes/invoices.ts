import type { Route } from '../routes';

const INVOICE =
  '...InvoiceFields supplier { ...InvoiceSupplierFields } recipient { ...InvoiceRecipientFields } lineItems { ...InvoiceLineItemFields }';
const PAGE = 'pageInfo { hasNextPage endCursor }';

/** Invoices and credit notes (src/modules/invoices), and the merchant's tax settings they are issued with. */
export const INVOICE_ROUTES: Route[] = [
  {
    method: 'get',
    path: '/invoices',
    tag: 'Invoices',
    summary:
      'List invoices and credit notes, newest first (filters: customer_id, subscription_id, type), with their line items.',
    document: `query($first: Int, $after: String, $customerId: ID, $subscriptionId: ID, $type: InvoiceType) {
      invoices(first: $first, after: $after, customerId: $customerId, subscriptionId: $subscriptionId, type: $type) {
        edges { node { ${INVOICE} } } ${PAGE} } }`,
  },
  {
    method: 'get',
    path: '/invoices/{id}',
    tag: 'Invoices',
    summary: 'Retrieve an invoice or credit note with its line items.',
    document: `query($id: ID!) { invoice(id: $id) { ${INVOICE} } }`,
  },
  {
    method: 'post',
    path: '/invoices/{id}/e-invoice/retry',
    tag: 'Invoices',
    conflicts: ['invalid_state_transition'],
    summary:
      'Send a failed e-invoice registration to the invoice registration portal again (e_invoice_status back to pending).',
    document: `mutation($id: ID!) { retryEInvoice(id: $id) { ${INVOICE} } }`,
  },
  {
    method: 'post',
    path: '/invoices/{id}/e-invoice/cancel',
    tag: 'Invoices',
    conflicts: ['e_invoice_not_cancellable'],
    gateway: true,
    summary:
      "Cancel a registered e-invoice's IRN at the portal (reason, remark), within 24 hours of its acknowledgement; the document stands.",
    document: `mutation($id: ID!, $input: CancelEInvoiceInput!) { cancelEInvoice(id: $id, input: $input) { ${INVOICE} } }`,
  },
  {
    method: 'post',
    path: '/merchant/tax-settings',
    tag: 'Merchant',
    summary:
      "Update the merchant's GST settings (gstin, state_code, tax_rate_bps, sac_code, address, e_invoicing); omitted fields are kept, null clears.",
    document: 'mutation($input: UpdateTaxSettingsInput!) { updateTaxSettings(input: $input) { ...TaxSettingsFields } }',
  },
];
