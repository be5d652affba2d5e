import {
  Arg,
  Args,
  ArgsType,
  Ctx as C,
  Field,
  FieldResolver,
  ID,
  Mutation,
  Query,
  Resolver,
  Root,
  Subscription,
} from 'type-graphql';
import type { ClassType } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import type { Change } from '../../core/events';
import { readOncePerChange } from '../../core/fanout';
import { ConnectionType, PageArgs } from '../../core/pagination';
import { services } from '../../services';
import { PaymentCommandsResolver } from './payment.commands.resolver';
import { CustomerRevenueResolver } from './payment.customer.resolver';
import { Payment, PaymentStatus, Refund } from './payment.entities';
import { CreatePaymentInput, RefundPaymentInput } from './payment.inputs';
import { refundsByPayment } from './payment.service';
import { IDEMPOTENCY_KEY, storedEntity, withIdempotency } from '../idempotency';

export const PaymentConnection = ConnectionType(Payment);

@ArgsType()
class PaymentsArgs extends PageArgs {
  @Field(() => PaymentStatus, { nullable: true }) status?: PaymentStatus | null;
  @Field(() => ID, { nullable: true }) customerId?: string | null;
}

@Resolver(() => Payment)
export class PaymentResolver {
  @Query(() => Payment)
  payment(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).payments.payment(ctx, id);
  }

  @Query(() => PaymentConnection, { description: 'Payments, newest first.' })
  payments(@C() ctx: Ctx, @Args() args: PaymentsArgs) {
    return services(ctx).payments.payments(ctx, args);
  }

  @Mutation(() => Payment, { description: 'Creates a payment and its hosted checkout URL.' })
  createPayment(
    @C() ctx: Ctx,
    @Arg('input') input: CreatePaymentInput,
    @Arg('idempotencyKey', () => String, { nullable: true, description: IDEMPOTENCY_KEY })
    idempotencyKey?: string | null,
  ) {
    return withIdempotency(
      ctx,
      idempotencyKey,
      { operation: 'createPayment', input, result: storedEntity(Payment) },
      (attempt) => services(ctx).payments.create(ctx, input, attempt),
    );
  }

  @Mutation(() => Refund, { description: 'Refunds a succeeded payment, fully (no amount) or partly.' })
  refundPayment(
    @C() ctx: Ctx,
    @Arg('id', () => ID) id: string,
    @Arg('input', () => RefundPaymentInput, { nullable: true }) input: RefundPaymentInput | null,
    @Arg('idempotencyKey', () => String, { nullable: true, description: IDEMPOTENCY_KEY })
    idempotencyKey?: string | null,
  ) {
    const request = { operation: 'refundPayment', input: { id, input: input ?? {} }, result: storedEntity(Refund) };
    return withIdempotency(ctx, idempotencyKey, request, (attempt) =>
      services(ctx).payments.refund(ctx, id, input ?? {}, attempt),
    );
  }

  @FieldResolver(() => [Refund])
  refunds(@C() ctx: Ctx, @Root() payment: Payment) {
    return refundsByPayment(ctx).load(payment.id);
  }

  @Subscription(() => Payment, {
    description: "Every change of the payment (or of any of the merchant's payments in this mode when id is omitted).",
    topics: 'payment',
    filter: ({ payload, args, context }: { payload: Change; args: { id?: string | null }; context: Ctx }) => {
      const { merchantId, mode } = tenantOf(context);
      return payload.merchantId === merchantId && payload.mode === mode && (!args.id || args.id === payload.id);
    },
  })
  paymentUpdated(
    @Root() change: Change,
    @C() ctx: Ctx,
    @Arg('id', () => ID, { nullable: true }) _id?: string,
  ): Promise<Payment> {
    const { merchantId, mode } = tenantOf(ctx);
    // Read once for all of this process's subscribers of the tenant, in a fresh fork of the subscriber's tenant-bound
    // EntityManager (it reads the committed row afresh); nested fields still resolve through each subscriber's loaders.
    return readOncePerChange(change, `${merchantId}:${mode}`, () =>
      services(ctx).payments.payment({ ...ctx, em: ctx.em.fork({ clear: true }), loaders: new Map() }, change.id),
    );
  }
}

export const paymentResolvers: ClassType[] = [PaymentResolver, PaymentCommandsResolver, CustomerRevenueResolver];
