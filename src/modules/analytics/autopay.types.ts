import { Field, Float, Int, ObjectType, registerEnumType } from 'type-graphql';
import { DateTime } from '../../core/scalars';

/** How a mandate was set up (the gateway's payment method); `unknown` when the gateway event named none Cadence knows. */
export enum MandateMethod {
  UPI = 'upi',
  CARD = 'card',
  EMANDATE = 'emandate',
  UNKNOWN = 'unknown',
}
registerEnumType(MandateMethod, {
  name: 'MandateMethod',
  description:
    'UPI autopay, a card mandate, or an e-mandate (bank-account debit); unknown when the gateway named none of these.',
});

@ObjectType({ description: 'Mandate attempts with one payment method.' })
export class AutopayMethodStats {
  @Field(() => MandateMethod) method!: MandateMethod;
  @Field(() => Int) attempts!: number;
  @Field(() => Int) authorized!: number;
  @Field(() => Float, { description: 'authorized / attempts, a fraction.' }) successRate!: number;
}

@ObjectType({ description: 'Debits from mandates announced ahead (docs/india.md), by what they announced.' })
export class PreDebitNoticeStats {
  @Field(() => Int) sent!: number;
  @Field(() => Int, { description: "Renewals (the gateway's debit at a period's or trial's end)." }) renewals!: number;
  @Field(() => Int, { description: 'Dunning retries of an open invoice.' }) retries!: number;
  @Field(() => Int, {
    description: "Invoices the service collects from the mandate itself (a plan change's adjustment, usage; Stripe).",
  })
  collections!: number;
  @Field(() => Int, { description: 'Of the notices sent, the debits the customer declined (in the portal).' })
  declined!: number;
}

@ObjectType({
  description: 'Debits above the mandate limit the gateway asked the customer to authenticate (docs/india.md).',
})
export class AutopayAuthenticationStats {
  @Field(() => Int, { description: 'Debits (invoices) whose authentication was first asked for in the window.' })
  required!: number;
  @Field(() => Int, { description: 'Of those, the ones the customer authenticated and paid.' })
  completed!: number;
}

@ObjectType({ description: 'Failed mandate attempts with one failure reason.' })
export class AutopayFailureReason {
  @Field({ description: "The gateway's decline or error reason (e.g. card_declined, payment_failed)." })
  reason!: string;
  @Field(() => Int) count!: number;
}

@ObjectType({ description: "Mandate attempts with one bank: a bank's health." })
export class AutopayBankStats {
  @Field(() => String, {
    nullable: true,
    description:
      "The card's issuing bank, the UPI VPA handle's PSP bank, or the e-mandate's bank (short upper-case name, e.g. HDFC); null when the gateway named none.",
  })
  bank!: string | null;
  @Field(() => Int) attempts!: number;
  @Field(() => Int) authorized!: number;
  @Field(() => Float, { description: 'authorized / attempts, a fraction.' }) successRate!: number;
}

@ObjectType({
  description:
    'Mandate authorisation at the gateways over (from, to]: an attempt is one subscription mandate checkout that completed (authorized) or ' +
    'failed at the gateway; a checkout abandoned, cancelled or expired without an attempt at the gateway is none.',
})
export class AutopayReport {
  @Field(() => DateTime) from!: Date;
  @Field(() => DateTime) to!: Date;
  @Field(() => Int) attempts!: number;
  @Field(() => Int) authorized!: number;
  @Field(() => Int) failed!: number;
  @Field(() => Float, {
    nullable: true,
    description: 'authorized / attempts, a fraction; null when there were no attempts.',
  })
  successRate!: number | null;
  @Field(() => [AutopayMethodStats], { description: 'Per payment method, most attempts first (then by method).' })
  byMethod!: AutopayMethodStats[];
  @Field(() => [AutopayFailureReason], { description: 'Failed attempts per reason, most first (then by reason).' })
  failureReasons!: AutopayFailureReason[];
  @Field(() => [AutopayBankStats], {
    description: 'Per bank, most attempts first (then by name; the attempts naming no bank last).',
  })
  banks!: AutopayBankStats[];
  @Field(() => PreDebitNoticeStats, { description: 'Pre-debit notices (invoice.upcoming) sent in the window.' })
  preDebitNotices!: PreDebitNoticeStats;
  @Field(() => AutopayAuthenticationStats, {
    description: 'Debits above the mandate limit, asked to be authenticated in the window, and how many were.',
  })
  authentication!: AutopayAuthenticationStats;
}
