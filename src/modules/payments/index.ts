/**
 * One-time payments, refunds and the gateway events they record.
 * The module's public surface: other modules import it only through this file.
 */
export { paymentChanges } from './payment.catchup';
export { payInvoiceByCollection, recordCollection } from './payment.collections';
export {
  COLLECTED_STATUSES,
  GatewayEventRecord,
  Payment,
  PaymentBillingReason,
  PaymentStatus,
  Refund,
} from './payment.entities';
export { paymentResolvers } from './payment.resolver';
export { PaymentService, reserveRefund } from './payment.service';
export { gatewayEventCte, paymentSql, PRUNE_GATEWAY_EVENTS } from './payment.store';
export type { GatewayEventRow } from './payment.store';
