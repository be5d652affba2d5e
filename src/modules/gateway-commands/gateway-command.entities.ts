import { Entity, Enum, Index, Property } from '@mikro-orm/core';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { TenantEntity } from '../../core/entity';
import { DateTime } from '../../core/scalars';

export enum GatewayCommandStatus {
  /** Not yet done at the gateway: due at `next_attempt_at` (a run in progress holds it until then). */
  PENDING = 'pending',
  SUCCEEDED = 'succeeded',
  /** Given up: the gateway refused it, or it did not go through for GATEWAY_COMMAND_RETRY_SECONDS. */
  FAILED = 'failed',
}
registerEnumType(GatewayCommandStatus, { name: 'GatewayCommandStatus' });

/**
 * A gateway call that follows a committed change (stop collecting a halted subscription, refund credit applied to a
 * renewal, collect a plan change's adjustment, ...), written in the change's transaction and run by the worker with
 * its own idempotency key until the gateway has done it or it is given up (docs/durable-work.md).
 */
@Entity({ tableName: 'gateway_commands' })
@Index({ properties: ['merchantId', 'mode', 'subscriptionId', 'id'] })
@Index({ properties: ['merchantId', 'mode', 'paymentId', 'id'] })
// The worker's claim reads pending commands in due order: a partial index keeps that read small however long history is.
@Index({
  name: 'gateway_commands_due_index',
  expression:
    'create index "gateway_commands_due_index" on "gateway_commands" ("next_attempt_at") where "status" = \'pending\'',
})
// GET /metrics counts the commands given up (docs/production.md): few, so a partial index keeps the count cheap.
@Index({
  name: 'gateway_commands_failed_index',
  expression:
    'create index "gateway_commands_failed_index" on "gateway_commands" ("completed_at") where "status" = \'failed\'',
})
@ObjectType({
  description:
    'A gateway call the service makes after a change has committed: retried until the gateway has done it, or given up (then the event gateway_command.failed).',
})
export class GatewayCommand extends TenantEntity {
  @Field()
  get object(): string {
    return 'gateway_command';
  }

  @Field({
    description:
      'What is asked of the gateway (cancel_subscription, stop_collection, refund, collect_invoice, full_price, ...) or of the invoice registration portal (register_e_invoice)',
  })
  @Property({ length: 64 })
  action!: string;
  @Field({ description: 'Why, in words.' }) @Property({ type: 'text' }) description!: string;
  @Field(() => ID, { nullable: true }) @Property({ type: 'uuid', nullable: true }) subscriptionId?: string | null;
  @Field(() => ID, { nullable: true }) @Property({ type: 'uuid', nullable: true }) paymentId?: string | null;
  @Field(() => ID, { nullable: true }) @Property({ type: 'uuid', nullable: true }) invoiceId?: string | null;
  /** null: a command of an outside service other than a gateway (the invoice registration portal). */
  @Property({ type: 'uuid', nullable: true })
  connectionId?: string | null;
  /** The call's arguments, as its handler reads them. */
  @Property({ type: 'jsonb' }) args: Record<string, unknown> = {};
  @Field({ description: 'Sent with every attempt: the gateway does the call once however often it is tried.' })
  @Property({ type: 'text' })
  idempotencyKey!: string;
  @Field(() => GatewayCommandStatus) @Enum({ items: () => GatewayCommandStatus }) status: GatewayCommandStatus =
    GatewayCommandStatus.PENDING;
  @Field(() => Int) @Property() attempts: number = 0;
  @Field(() => DateTime, {
    nullable: true,
    description: 'When the next attempt is due (wall time); null once done or given up.',
  })
  @Property({ type: 'timestamptz', nullable: true })
  nextAttemptAt?: Date | null = new Date();
  @Field(() => String, {
    nullable: true,
    description: "The last attempt's error, as the gateway or the network gave it.",
  })
  @Property({ type: 'text', nullable: true })
  lastError?: string | null;
  @Field(() => DateTime, { nullable: true, description: 'When it succeeded or was given up.' })
  @Property({ type: 'timestamptz', nullable: true })
  completedAt?: Date | null;
  @Field(() => DateTime, {
    nullable: true,
    description:
      "Held until this time on the merchant's clock (a mandate debit announced 24 hours ahead is not asked for earlier)",
  })
  @Property({ type: 'timestamptz', nullable: true })
  notBefore?: Date | null;
  /** Attempts stop after this (wall time): created_at (or the end of the hold) + GATEWAY_COMMAND_RETRY_SECONDS. */
  @Property({ type: 'timestamptz' }) giveUpAt!: Date;
  /** The claim of the run in progress: only it records an outcome. */
  @Property({ type: 'uuid', nullable: true }) lockToken?: string | null;
}
