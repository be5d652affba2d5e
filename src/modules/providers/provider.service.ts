import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { toSnake as snake } from '../../core/case';
import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import { make } from '../../core/entity';
import { DomainError } from '../../core/errors';
import { findOr404 } from '../../core/find';
import { Connection, PageArgs, paginate } from '../../core/pagination';
import type { SecretBox } from '../../core/secrets';
import { Credentials, GatewayError, GatewayPort, ProviderName } from '../../gateways/port';
import { Provider, ProviderConnection } from './provider-connection.entities';
import type { ConnectProviderInput, ProviderCredentialsInput } from './provider.inputs';
import { connectionFor, connectionForWebhook } from './provider.store';

export type GatewayFactory = (provider: ProviderName, credentials: Credentials) => GatewayPort;

/** Gateway failures in the API's error terms: unreachable or refused. */
export function fromGatewayError(err: unknown): DomainError {
  if (err instanceof DomainError) return err;
  if (err instanceof GatewayError && err.code === 'gateway_rejected') {
    return new DomainError('gateway_rejected', err.message);
  }
  return new DomainError(
    'gateway_unavailable',
    'The payment gateway did not answer. Retry with the same Idempotency-Key.',
  );
}

const REQUIRED: Record<Provider, (keyof ProviderCredentialsInput)[]> = {
  [Provider.STRIPE]: ['secretKey', 'webhookSecret'],
  [Provider.RAZORPAY]: ['keyId', 'keySecret', 'webhookSecret'],
};

function credentialsOf(provider: Provider, input: ProviderCredentialsInput): Credentials {
  const allowed = REQUIRED[provider];
  for (const [k, v] of Object.entries(input)) {
    if (v != null && !allowed.includes(k as keyof ProviderCredentialsInput)) {
      throw new DomainError(
        'parameter_unknown',
        `${provider} credentials take no ${snake(k)}.`,
        `credentials.${snake(k)}`,
      );
    }
  }
  for (const k of allowed) {
    const v = input[k];
    if (typeof v !== 'string' || !v.trim()) {
      throw new DomainError(
        'parameter_missing',
        `Missing required parameter: credentials.${snake(k)}`,
        `credentials.${snake(k)}`,
      );
    }
  }
  return Object.fromEntries(allowed.map((k) => [snake(k), input[k]!.trim()])) as unknown as Credentials;
}

function hintOf(provider: Provider, c: Credentials): string {
  const id = provider === Provider.STRIPE ? (c as { secret_key: string }).secret_key : (c as { key_id: string }).key_id;
  const prefix = id.match(/^(sk|rk|rzp)_(test|live)_/)?.[0] ?? '';
  return `${prefix}...${id.slice(-4)}`;
}

export class ProviderService {
  constructor(
    private readonly secrets: SecretBox,
    private readonly gatewayFactory: GatewayFactory,
    /** Known once the server listens (the port may be chosen by the OS). */
    private readonly publicUrl: () => string,
    /** How many subscriptions not ended use a connection: the subscriptions module answers (it sits above providers). */
    private readonly openSubscriptionsOfConnection: (em: EntityManager, connectionId: string) => Promise<number>,
  ) {}

  /**
   * Connects a gateway account: credentials are checked with one gateway call, sealed, and stored once per
   * provider and mode (the unique index settles races); the gateway is then told where to send its events.
   */
  async connect(ctx: Ctx, input: ConnectProviderInput): Promise<ProviderConnection> {
    const { mode } = tenantOf(ctx);
    const credentials = credentialsOf(input.provider, input.credentials);
    // A key names its mode (sk_live_..., rzp_test_...): a test-mode connection takes test keys only, and vice versa.
    const keyMode = hintOf(input.provider, credentials).match(/^(?:sk|rk|rzp)_(test|live)_/)?.[1];
    if (keyMode && keyMode !== mode) {
      throw new DomainError(
        'parameter_invalid',
        `The ${input.provider} credentials are ${keyMode}-mode keys; this is ${mode} mode.`,
        'credentials',
      );
    }
    if (await ctx.em.count(ProviderConnection, { provider: input.provider })) throw alreadyConnected(input.provider);
    const gateway = this.gatewayFactory(input.provider, credentials);
    try {
      await gateway.verifyCredentials();
    } catch (err) {
      if (err instanceof GatewayError && err.code === 'gateway_rejected') {
        throw new DomainError(
          'parameter_invalid',
          `The ${input.provider} credentials were rejected: ${err.message}`,
          'credentials',
        );
      }
      throw fromGatewayError(err);
    }
    const connection = make(ProviderConnection, {
      provider: input.provider,
      credentialsHint: hintOf(input.provider, credentials),
      credentialsSealed: this.secrets.seal(JSON.stringify(credentials)),
    });
    connection.webhookUrl = `${this.publicUrl()}/v1/providers/${input.provider}/webhooks/${connection.id}`;
    try {
      await ctx.em.transactional(async (em) => {
        const others = await em.find(ProviderConnection, {}, { lockMode: LockMode.PESSIMISTIC_WRITE });
        connection.isDefault = input.isDefault ?? !others.some((o) => o.isDefault);
        if (connection.isDefault) for (const o of others) o.isDefault = false;
        em.persist(connection);
      });
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) throw alreadyConnected(input.provider);
      throw err;
    }
    try {
      await gateway.registerWebhook(connection.webhookUrl);
    } catch (err) {
      // Undo: a connection whose events cannot arrive would leave payments pending forever.
      await ctx.em.fork().nativeDelete(ProviderConnection, { id: connection.id });
      throw fromGatewayError(err);
    }
    ctx.log.info({ provider: input.provider, mode, connection_id: connection.id }, 'provider connected');
    return connection;
  }

  async list(ctx: Ctx, args: PageArgs): Promise<Connection<ProviderConnection>> {
    tenantOf(ctx);
    return paginate(ctx.em, ProviderConnection, {}, args);
  }

  async remove(ctx: Ctx, id: string): Promise<ProviderConnection> {
    return ctx.em.transactional(async (em) => {
      const connection = await findOr404(em, ProviderConnection, id, 'provider connection');
      await this.assertNotInUse(em, connection);
      em.remove(connection);
      if (connection.isDefault) {
        const next = await em.findOne(ProviderConnection, { id: { $ne: connection.id } });
        if (next) next.isDefault = true;
      }
      return connection;
    });
  }

  /** Subscriptions that have not ended keep their connection. */
  private async assertNotInUse(em: EntityManager, connection: ProviderConnection): Promise<void> {
    const inUse = await this.openSubscriptionsOfConnection(em, connection.id);
    if (inUse) {
      throw new DomainError(
        'provider_in_use',
        `This connection is used by ${inUse} subscription(s) that have not ended.`,
      );
    }
  }

  /** The connection a new payment or subscription uses: the named provider, else the mode's default. */
  async resolve(ctx: Ctx, provider?: Provider | null): Promise<ProviderConnection> {
    const { mode } = tenantOf(ctx);
    const connection = await connectionFor(ctx.em, provider);
    if (!connection) {
      throw new DomainError(
        'provider_not_connected',
        provider
          ? `No ${provider} connection in ${mode} mode. Connect one at POST /v1/providers/connections.`
          : `No payment gateway is connected in ${mode} mode.`,
        provider ? 'provider' : null,
      );
    }
    return connection;
  }

  /** Adapters are reused per connection (their SDK clients keep connections alive); keyed by the sealed credentials. */
  private adapters = new Map<string, GatewayPort>();

  gatewayFor(connection: ProviderConnection): GatewayPort {
    const key = `${connection.id}:${connection.credentialsSealed}`;
    let adapter = this.adapters.get(key);
    if (!adapter) {
      adapter = this.gatewayFactory(
        connection.provider as ProviderName,
        JSON.parse(this.secrets.open(connection.credentialsSealed)),
      );
      if (this.adapters.size >= 1000) this.adapters.delete(this.adapters.keys().next().value!);
      this.adapters.set(key, adapter);
    }
    return adapter;
  }

  /** For inbound webhooks: the connection by id alone (the URL names it), with its tenant. */
  async findForWebhook(root: EntityManager, provider: string, id: string): Promise<ProviderConnection | null> {
    // Checked before the query: a provider name PostgreSQL cannot hold (NUL) would fail the statement.
    if (!/^[0-9a-f-]{36}$/.test(id) || !(Object.values(Provider) as string[]).includes(provider)) return null;
    return connectionForWebhook(root.fork(), id, provider as Provider);
  }
}

const alreadyConnected = (provider: string) =>
  new DomainError(
    'provider_already_connected',
    `A ${provider} connection already exists in this mode. Delete it first to reconnect.`,
    'provider',
  );
