/**
 * The gateway calls subscriptions make after a change commits, as durable commands (docs/durable-work.md): each is
 * written with the change (SubscriptionChange.gatewayCommand) and run by one of the handlers in
 * subscription.commands.ts, again until the gateway has done it. A handler's database writes after its call change
 * nothing when run twice.
 */
export const SubscriptionCommand = {
  /** End the gateway subscription (now, or at the period's end): a mandate authorised after cancellation, a trial end, a term's end. */
  CANCEL: 'cancel_subscription',
  /** A halted subscription: the gateway must charge nothing more, whatever state it holds the subscription in. */
  STOP_COLLECTION: 'stop_collection',
  /** Refund the part of a renewal's charge that credit from earlier credit notes paid. */
  REFUND_CREDIT: 'refund_credit',
  /** Collect an invoice the change issued (a plan change's adjustment, a closed period's usage) from the mandate. */
  COLLECT_INVOICE: 'collect_invoice',
  /** A coupon ended: the gateway charges the full price from the next renewal. */
  FULL_PRICE: 'full_price',
  /** A renewal announced less than 24 hours ahead: the gateway makes its invoice but holds the debit (Stripe). */
  HOLD_RENEWAL: 'hold_renewal',
  /** 24 hours after that notice: the held renewal is charged. */
  RELEASE_RENEWAL: 'release_renewal',
  /** A new mandate the customer authorised (a setup page): the gateway charges it from now on. */
  APPLY_MANDATE: 'apply_mandate',
} as const;
