import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ClaimLoop } from '../../core/claim-loop';
import type { Ctx } from '../../core/context';
import { tenantEntityManager, tenantOf } from '../../core/context';
import { make } from '../../core/entity';
import { recordEvent } from '../../core/events';
import type { PgListener } from '../../core/listener';
import { logger } from '../../core/logger';
import type { ServicePool } from '../../core/orm-pool';
import { idFilters, PageArgs, paginate } from '../../core/pagination';
import type { Serializer } from '../../core/serialize';
import { GatewayError, GatewayPort } from '../../gateways/port';
import { ProviderConnection } from '../providers';
import type { ProviderService } from '../providers';
import { GatewayCommand, GatewayCommandStatus } from './gateway-command.entities';
import { commandLeaseMs, nextAttempt } from './gateway-command.policy';
import { claimCommands, CommandJob, GATEWAY_COMMAND_CHANNEL, heldDue, nextHeldAt } from './gateway-command.store';
import type { DueWork } from '../test-clock';

/** How long the worker leaves a new command to the process that wrote it. */
const INLINE_GRACE_MS = 10_000;

/** A command to write with a change. */
export interface NewCommand {
  action: string;
  description: string;
  /** The gateway connection it calls through; null for a command of another outside service (registerService). */
  connectionId: string | null;
  subscriptionId?: string | null;
  paymentId?: string | null;
  invoiceId?: string | null;
  args?: Record<string, unknown>;
  idempotencyKey: string;
  /**
   * Hold it until `until`, a time on the merchant's clock, which reads `now` (docs/india.md: a debit announced 24 hours
   * ahead). Nobody runs a held command after its commit: the worker takes it when the wall clock has moved as far, and
   * the test clock when it passes `until`.
   */
  hold?: { until: Date; now: Date };
}

/**
 * Runs one command's gateway call(s) with `job.idempotency_key`, and records in the database what they changed (in a
 * transaction of its own, written so that a second run changes nothing more). Returns normally once the gateway has
 * done what was asked (including "it was already done"); throws otherwise: a GatewayError `gateway_rejected` (the
 * gateway refused: given up at once) or anything else (tried again).
 */
export type CommandHandler = (job: CommandJob, gateway: GatewayPort, em: EntityManager) => Promise<void>;

/**
 * A command to an outside service other than a payment gateway (the invoice registration portal): the same contract
 * as CommandHandler without a gateway connection; `givenUp` records, in the transaction that gives the command up,
 * what that means for the command's subject.
 */
export interface ServiceCommand {
  run: (job: CommandJob, em: EntityManager) => Promise<void>;
  givenUp?: (job: CommandJob, em: EntityManager, lastError: string) => Promise<void>;
}

export interface GatewayCommandListArgs extends PageArgs {
  subscriptionId?: string | null;
  paymentId?: string | null;
  status?: GatewayCommandStatus | null;
}

/**
 * Durable gateway calls (docs/durable-work.md). A change writes its commands in its own transaction (`queue`); after
 * the commit the process that made it runs them at once (`runNow`), and whatever that did not finish (the process
 * died, the gateway failed or timed out) the worker loop of any process claims when due and runs again with the same
 * idempotency key, with capped backoff, until the gateway has done it or GATEWAY_COMMAND_RETRY_SECONDS have passed.
 * A command given up raises the event `gateway_command.failed`. Modules register a handler per action.
 */
export class GatewayCommands {
  private readonly handlers = new Map<string, CommandHandler>();
  private readonly serviceCommands = new Map<string, ServiceCommand>();
  private loop: ClaimLoop<CommandJob> | null = null;
  private readonly leaseMs: number;

  constructor(
    private readonly root: EntityManager,
    private readonly pool: ServicePool,
    private readonly providers: ProviderService,
    private readonly serializer: () => Serializer,
    private readonly options: {
      retrySeconds: number;
      firstRetryMs: number;
      gatewayTimeoutMs: number;
      concurrency: number;
      pollMs: number;
    },
  ) {
    this.leaseMs = commandLeaseMs(options.gatewayTimeoutMs);
  }

  register(action: string, handler: CommandHandler): void {
    if (this.handlers.has(action) || this.serviceCommands.has(action))
      throw new Error(`gateway command ${action} registered twice`);
    this.handlers.set(action, handler);
  }

  /** A command without a gateway connection (ServiceCommand): run, retried and given up like the others. */
  registerService(action: string, command: ServiceCommand): void {
    if (this.handlers.has(action) || this.serviceCommands.has(action))
      throw new Error(`gateway command ${action} registered twice`);
    this.serviceCommands.set(action, command);
  }

  /**
   * Writes a command in `em`'s transaction (flushed with the change): it exists exactly when the change committed.
   * The process that commits it runs it (`runNow`); the worker takes it only when that has not happened within
   * INLINE_GRACE_MS (the process died in between), so the two never race for it.
   */
  queue(em: EntityManager, command: NewCommand, options: { runBy?: 'caller' | 'worker' } = {}): GatewayCommand {
    const service = this.serviceCommands.has(command.action);
    if (!this.handlers.has(command.action) && !service)
      throw new Error(`no handler for gateway command ${command.action}`);
    if (service !== (command.connectionId === null))
      throw new Error(`gateway command ${command.action}: a gateway connection exactly when it calls a gateway`);
    const now = new Date();
    const heldMs = command.hold ? Math.max(0, command.hold.until.getTime() - command.hold.now.getTime()) : 0;
    const start = new Date(now.getTime() + heldMs);
    const row = make(GatewayCommand, {
      action: command.action,
      description: command.description,
      connectionId: command.connectionId,
      subscriptionId: command.subscriptionId ?? null,
      paymentId: command.paymentId ?? null,
      invoiceId: command.invoiceId ?? null,
      args: command.args ?? {},
      idempotencyKey: command.idempotencyKey,
      // runBy 'worker': no process runs it after its commit (it is written where no caller waits for it).
      nextAttemptAt: command.hold
        ? start
        : options.runBy === 'worker'
          ? now
          : new Date(now.getTime() + INLINE_GRACE_MS),
      notBefore: command.hold?.until ?? null,
      giveUpAt: new Date(start.getTime() + this.options.retrySeconds * 1000),
    });
    em.persist(row);
    return row;
  }

  /**
   * Runs committed commands now, in this process (the caller waits for the gateway, as it did before commands were
   * durable); those another process holds, or already ran, are left alone. Never throws: what fails here is the
   * worker's to retry.
   */
  async runNow(ids: string[]): Promise<void> {
    if (!ids.length) return;
    try {
      const jobs = await claimCommands(this.pool, ids.length, this.leaseMs, ids);
      for (const job of jobs) await this.run(job);
    } catch (err) {
      logger.warn({ err, commands: ids }, 'gateway commands not run now: the worker runs them');
    }
  }

  /** One attempt of a claimed command, and its outcome (only while the claim is still its own). */
  async run(job: CommandJob): Promise<void> {
    const tenant = { merchantId: job.merchant_id, mode: job.mode };
    const em = tenantEntityManager(this.root, tenant);
    let failure: { error: string; refused: boolean } | null = null;
    try {
      const service = this.serviceCommands.get(job.action);
      if (service) await service.run(job, em);
      else await this.runOnGateway(job, em);
    } catch (err) {
      const refused = err instanceof GatewayError && err.code === 'gateway_rejected';
      failure = { error: err instanceof Error ? err.message : String(err), refused };
      logger.warn(
        { err, command_id: job.id, action: job.action, attempt: job.attempts },
        refused ? 'gateway refused a command' : 'gateway command failed; tried again later',
      );
    }
    await this.record(job, failure);
  }

  private async runOnGateway(job: CommandJob, em: EntityManager): Promise<void> {
    const handler = this.handlers.get(job.action);
    if (!handler) throw new GatewayError('gateway_rejected', `no handler for gateway command ${job.action}`);
    if (!job.connection_id) throw new GatewayError('gateway_rejected', 'the command names no gateway connection');
    const connection = await em.findOne(
      ProviderConnection,
      { id: job.connection_id },
      { populate: ['credentialsSealed'] },
    );
    if (!connection) throw new GatewayError('gateway_rejected', 'the gateway connection was removed');
    await handler(job, this.providers.gatewayFor(connection), em);
  }

  private async record(job: CommandJob, failure: { error: string; refused: boolean } | null): Promise<void> {
    const em = tenantEntityManager(this.root, { merchantId: job.merchant_id, mode: job.mode });
    await em.transactional(async (tx) => {
      const cmd = await tx.findOne(GatewayCommand, { id: job.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      // Its lease ran out and another run holds it now: that run records the outcome.
      if (!cmd || cmd.status !== GatewayCommandStatus.PENDING || cmd.lockToken !== job.lock_token) return;
      const now = new Date();
      cmd.lockToken = null;
      if (!failure) {
        cmd.status = GatewayCommandStatus.SUCCEEDED;
        cmd.completedAt = now;
        cmd.nextAttemptAt = null;
        return;
      }
      cmd.lastError = failure.error.slice(0, 1000);
      const next = nextAttempt(job.attempts, failure.refused, now, new Date(job.give_up_at), this.options.firstRetryMs);
      if (next) {
        cmd.nextAttemptAt = next;
        return;
      }
      cmd.status = GatewayCommandStatus.FAILED;
      cmd.completedAt = now;
      cmd.nextAttemptAt = null;
      await this.serviceCommands.get(job.action)?.givenUp?.(job, tx, cmd.lastError);
      await tx.flush();
      recordEvent(tx, 'gateway_command.failed', this.serializer().toRest(cmd), job.mode);
    });
  }

  /** Test-clock work: a merchant's held test-mode commands run as its clock passes the time they are held until. */
  readonly heldDueWork: DueWork = {
    name: 'held gateway commands',
    nextDue: (merchantId, until) => nextHeldAt(this.pool, merchantId, until),
    runDue: async (merchantId, at) => {
      for (;;) {
        const ids = await heldDue(this.pool, merchantId, at, 50);
        if (!ids.length) return;
        await this.runNow(ids);
        // Those another run holds now (or that failed and wait for their retry) are no longer held: never loop on them.
        if ((await heldDue(this.pool, merchantId, at, 50)).every((id) => ids.includes(id))) return;
      }
    },
  };

  /** The worker loop of this process (npm start unless WORKER=off; npm run worker), woken through `listener`. */
  async startWorker(listener: PgListener | null): Promise<void> {
    if (this.loop) return;
    this.loop = new ClaimLoop<CommandJob>(
      {
        name: 'gateway command worker',
        claim: (limit) => claimCommands(this.pool, limit, this.leaseMs),
        run: (job) => this.run(job),
      },
      listener,
      GATEWAY_COMMAND_CHANNEL,
      // Commands come due seconds apart at the soonest (INLINE_GRACE_MS, the first retry): a second between looks.
      { concurrency: this.options.concurrency, pollMs: Math.max(this.options.pollMs, 1000) },
    );
    await this.loop.start();
  }

  /** Runs in flight finish and record their outcome. */
  async stopWorker(): Promise<void> {
    const loop = this.loop;
    this.loop = null;
    await loop?.stop();
  }

  /** The merchant's commands, newest first: of one subscription or payment, and in one status, when asked. */
  list(ctx: Ctx, args: GatewayCommandListArgs) {
    tenantOf(ctx);
    const where = idFilters(args, ['subscriptionId', 'paymentId']);
    if (args.status) where.status = args.status;
    return paginate(ctx.em, GatewayCommand, where, args);
  }
}
