import { useEffect, useMemo, useState } from 'react';
import { Alert, Anchor, Badge, Button, Card, Container, Group, Modal, Radio, Stack, Text, Title } from '@mantine/core';
import { Provider, useClient, useMutation, useQuery, type CombinedError } from 'urql';
import { graphql } from '../gql';
import type { PortalViewQuery } from '../gql/graphql';
import { makeClient } from '../lib/client';
import { isAuthError } from '../lib/errors';
import { cadenceText } from '../lib/cadence';
import { formatMoney } from '../lib/money';
import { Day, ErrorNote, Loading, Money, StatusBadge } from '../lib/ui';
import { downloadBase64 } from '../lib/download';

/**
 * The customer portal (docs/portal.md): the page a merchant sends its customer to. Its token is the URL's fragment
 * (never sent to the server as part of the address); every request carries it as the bearer, and the service
 * answers only this customer's data, for an hour.
 */
export function Portal() {
  const token = useMemo(() => decodeURIComponent(location.hash.replace(/^#/, '')), []);
  const session = useMemo(() => (token ? makeClient(token) : null), [token]);
  useEffect(() => () => session?.dispose(), [session]);
  if (!session) return <Expired />;
  return (
    <Provider value={session.client}>
      <PortalPage />
    </Provider>
  );
}

const Expired = () => (
  <Container size="sm" py="xl">
    <Alert color="orange" title="This link has expired">
      Portal links work for one hour. Go back to the merchant&apos;s site and open your account page again.
    </Alert>
  </Container>
);

const PortalQuery = graphql(`
  query PortalView {
    portal {
      merchantName
      returnUrl
      expiresAt
      customer {
        id
        email
        name
      }
      subscriptions {
        id
        status
        provider
        mandateStatus
        upcomingDebit {
          kind
          debitAt
          amountDue
          currency
        }
        amount
        currency
        billingFrequency
        billingInterval
        currentPeriodEnd
        trialEnd
        cancelAtPeriodEnd
        plan {
          id
          name
        }
        product {
          id
          name
        }
        scheduledChange {
          planId
          effectiveAt
        }
      }
      invoices {
        id
        number
        type
        status
        total
        amountDue
        currency
        issuedAt
        subscriptionId
        hostedAuthenticationUrl
      }
    }
  }
`);

function PortalPage() {
  const [{ data, error, fetching }, refetch] = useQuery({ query: PortalQuery });
  const reload = () => refetch({ requestPolicy: 'network-only' });
  if (isAuthError(error)) return <Expired />;
  const p = data?.portal;
  return (
    <Container size="sm" py="lg" px="sm">
      <Stack>
        {p && (
          <Group justify="space-between" align="flex-start">
            <div>
              <Title order={2} data-testid="portal-merchant">
                {p.merchantName}
              </Title>
              <Text size="sm" c="dimmed">
                {p.customer.name ? `${p.customer.name} · ` : ''}
                {p.customer.email}
              </Text>
            </div>
            <Anchor href={p.returnUrl} size="sm">
              Back to {p.merchantName}
            </Anchor>
          </Group>
        )}
        <ErrorNote error={error} />
        {fetching && !p && <Loading />}
        {p && (
          <>
            <Title order={3}>Subscriptions</Title>
            {p.subscriptions.length === 0 && <Text c="dimmed">You have no subscriptions.</Text>}
            {p.subscriptions.map((s) => (
              <SubscriptionCard
                key={s.id}
                sub={s}
                toAuthenticate={p.invoices.find(
                  (i) => i.subscriptionId === s.id && i.status === 'OPEN' && i.hostedAuthenticationUrl,
                )}
                onChanged={reload}
              />
            ))}
            <Title order={3}>Invoices and credit notes</Title>
            {p.invoices.length === 0 && <Text c="dimmed">No documents yet.</Text>}
            <Stack gap="xs">
              {p.invoices.map((inv) => (
                <DocumentRow key={inv.id} doc={inv} />
              ))}
            </Stack>
          </>
        )}
      </Stack>
    </Container>
  );
}

type PortalSub = PortalViewQuery['portal']['subscriptions'][number];
type PortalDoc = PortalViewQuery['portal']['invoices'][number];

const CancelAtPeriodEnd = graphql(`
  mutation PortalCancelAtPeriodEnd($id: ID!) {
    portalCancelAtPeriodEnd(subscriptionId: $id) {
      id
      status
      cancelAtPeriodEnd
    }
  }
`);
const KeepSubscription = graphql(`
  mutation PortalKeepSubscription($id: ID!) {
    portalKeepSubscription(subscriptionId: $id) {
      id
      status
      cancelAtPeriodEnd
    }
  }
`);
const AuthorizeMandate = graphql(`
  mutation PortalAuthorizeMandate($id: ID!) {
    portalAuthorizeMandate(subscriptionId: $id) {
      url
    }
  }
`);

const DeclineDebit = graphql(`
  mutation PortalDeclineDebit($id: ID!) {
    portalDeclineDebit(subscriptionId: $id) {
      id
      status
    }
  }
`);

const cadence = cadenceText;

function SubscriptionCard({
  sub,
  toAuthenticate,
  onChanged,
}: {
  sub: PortalSub;
  /** An open invoice whose debit, above the mandate's limit, waits for the customer's authentication. */
  toAuthenticate?: PortalDoc;
  onChanged: () => void;
}) {
  const [confirmCancel, setConfirmCancel] = useState(false);
  const [changing, setChanging] = useState(false);
  const [cancel, runCancel] = useMutation(CancelAtPeriodEnd);
  const [keep, runKeep] = useMutation(KeepSubscription);
  const [mandate, runMandate] = useMutation(AuthorizeMandate);
  const [confirmDecline, setConfirmDecline] = useState(false);
  const [decline, runDecline] = useMutation(DeclineDebit);
  // A renewal's announced debit may be declined (docs/india.md): the subscription pauses before it.
  const declinable = sub.status === 'ACTIVE' && sub.upcomingDebit?.kind === 'RENEWAL';
  const live = sub.status === 'ACTIVE' || sub.status === 'TRIALING';
  // The first mandate at its checkout; a new one for a running subscription where the gateway offers a page for it.
  const mandateOffered =
    sub.status === 'CREATED' ||
    (sub.provider === 'STRIPE' && ['ACTIVE', 'TRIALING', 'PAST_DUE', 'PAUSED'].includes(sub.status));
  const authorise = async () => {
    const r = await runMandate({ id: sub.id });
    if (r.data) location.assign(r.data.portalAuthorizeMandate.url);
  };
  return (
    <Card withBorder data-subscription-id={sub.id}>
      <Stack gap="xs">
        <Group justify="space-between">
          <Text fw={600}>
            {sub.product?.name} · {sub.plan?.name}
          </Text>
          <StatusBadge status={sub.status} />
        </Group>
        <Text size="sm">
          <Money amount={sub.amount} currency={sub.currency} /> {cadence(sub)}
        </Text>
        {sub.currentPeriodEnd && (
          <Text size="sm" c="dimmed">
            {sub.cancelAtPeriodEnd ? 'Ends on ' : sub.status === 'TRIALING' ? 'Trial ends on ' : 'Renews on '}
            <Day at={sub.status === 'TRIALING' ? (sub.trialEnd ?? sub.currentPeriodEnd) : sub.currentPeriodEnd} />
          </Text>
        )}
        {sub.upcomingDebit && (
          <Text size="sm" data-testid="upcoming-debit">
            Next debit from your mandate:{' '}
            <Money amount={sub.upcomingDebit.amountDue} currency={sub.upcomingDebit.currency} /> on{' '}
            <Day at={sub.upcomingDebit.debitAt} />
          </Text>
        )}
        {sub.mandateStatus === 'revoked' && live && (
          <Alert color="orange" title="Your mandate was revoked" data-testid="mandate-revoked">
            <Text size="sm">
              Nothing can be debited for this subscription until you authorise a new mandate
              {mandateOffered ? ' below' : ' with the merchant'}.
            </Text>
          </Alert>
        )}
        {toAuthenticate?.hostedAuthenticationUrl && (
          <Alert color="orange" title="A payment needs your approval" data-testid="authenticate-payment">
            <Text size="sm">
              Your bank asks you to approve the debit of{' '}
              <Money amount={toAuthenticate.amountDue} currency={toAuthenticate.currency} /> (invoice{' '}
              {toAuthenticate.number}): it is above the amount your mandate pays without you.
            </Text>
            <Anchor href={toAuthenticate.hostedAuthenticationUrl} size="sm">
              Approve the payment
            </Anchor>
          </Alert>
        )}
        {sub.cancelAtPeriodEnd && (
          <Badge color="orange" variant="light" data-testid="cancels-at-period-end">
            Cancels at the end of the period
          </Badge>
        )}
        {sub.scheduledChange && (
          <Text size="sm" c="dimmed">
            A plan change takes effect on <Day at={sub.scheduledChange.effectiveAt} />.
          </Text>
        )}
        <ErrorNote error={cancel.error ?? keep.error ?? mandate.error ?? decline.error} />
        <Group gap="xs">
          {live && !sub.cancelAtPeriodEnd && (
            <Button variant="default" onClick={() => setConfirmCancel(true)}>
              Cancel at period end
            </Button>
          )}
          {sub.cancelAtPeriodEnd && (
            <Button loading={keep.fetching} onClick={async () => (await runKeep({ id: sub.id })).data && onChanged()}>
              Keep subscription
            </Button>
          )}
          {live && !sub.cancelAtPeriodEnd && (
            <Button variant="default" onClick={() => setChanging(true)}>
              Change plan
            </Button>
          )}
          {mandateOffered && (
            <Button variant="subtle" loading={mandate.fetching} onClick={authorise}>
              Authorise a new mandate
            </Button>
          )}
          {declinable && (
            <Button variant="subtle" color="red" onClick={() => setConfirmDecline(true)}>
              Decline this debit
            </Button>
          )}
        </Group>
      </Stack>
      <Confirm
        opened={confirmCancel}
        title="Cancel at period end?"
        keep="Not now"
        confirm="Confirm cancellation"
        busy={cancel.fetching}
        onClose={() => setConfirmCancel(false)}
        onConfirm={async () => (await runCancel({ id: sub.id })).data}
        onDone={onChanged}
      >
        Your subscription stays active until the end of the current period, then ends. You can keep it until then.
      </Confirm>
      {sub.upcomingDebit && (
        <Confirm
          opened={confirmDecline}
          title="Decline this debit?"
          keep="Keep paying"
          confirm="Decline the debit"
          busy={decline.fetching}
          onClose={() => setConfirmDecline(false)}
          onConfirm={async () => (await runDecline({ id: sub.id })).data}
          onDone={onChanged}
        >
          <Money amount={sub.upcomingDebit.amountDue} currency={sub.upcomingDebit.currency} /> will not be debited on{' '}
          <Day at={sub.upcomingDebit.debitAt} />. Your subscription pauses now, until the merchant resumes it.
        </Confirm>
      )}
      {changing && <ChangePlan sub={sub} onClose={() => setChanging(false)} onChanged={onChanged} />}
    </Card>
  );
}

const PlanOptions = graphql(`
  query PortalPlanOptions($id: ID!) {
    portalPlanOptions(subscriptionId: $id) {
      planId
      planName
      priceId
      amount
      currency
      billingFrequency
      billingInterval
      current
    }
  }
`);
const Preview = graphql(`
  query PortalPreviewPlanChange($id: ID!, $priceId: ID!) {
    portalPreviewPlanChange(subscriptionId: $id, priceId: $priceId) {
      ...PlanChangePreviewParts
    }
  }
`);
const ChangePlanMutation = graphql(`
  mutation PortalChangePlan($id: ID!, $priceId: ID!) {
    portalChangePlan(subscriptionId: $id, priceId: $priceId) {
      subscription {
        id
        status
        planId
        amount
      }
    }
  }
`);

function ChangePlan({ sub, onClose, onChanged }: { sub: PortalSub; onClose: () => void; onChanged: () => void }) {
  const [{ data, error }] = useQuery({ query: PlanOptions, variables: { id: sub.id } });
  const [priceId, setPriceId] = useState<string | null>(null);
  const [preview] = useQuery({
    query: Preview,
    variables: { id: sub.id, priceId: priceId ?? '' },
    pause: !priceId,
    requestPolicy: 'network-only',
  });
  const [change, runChange] = useMutation(ChangePlanMutation);
  const p = preview.data?.portalPreviewPlanChange;
  return (
    <Modal opened onClose={onClose} title="Change plan">
      <Stack>
        <ErrorNote error={error ?? preview.error ?? change.error} />
        {!data && !error && <Loading />}
        {data && (
          <Radio.Group value={priceId} onChange={setPriceId} label="Choose a plan">
            <Stack gap="xs" mt="xs">
              {data.portalPlanOptions.map((o) => (
                <Radio
                  key={o.priceId}
                  value={o.priceId}
                  disabled={o.current}
                  label={`${o.planName} · ${formatMoney(o.amount, o.currency)} ${cadence(o)}${o.current ? ' (current)' : ''}`}
                />
              ))}
            </Stack>
          </Radio.Group>
        )}
        {priceId && !p && !preview.error && <Loading label="Working out the difference…" />}
        {p && (
          <Card withBorder bg="gray.0" data-testid="portal-proration">
            <Text size="sm">
              {p.total > 0
                ? `You pay ${formatMoney(p.total, p.currency)} now${p.taxAmount ? ` (including ${formatMoney(p.taxAmount, p.currency)} GST)` : ''}.`
                : p.total < 0
                  ? `${formatMoney(-p.total, p.currency)} is credited to your next invoices.`
                  : 'Nothing to pay now.'}
            </Text>
            <Text size="sm" c="dimmed">
              From then on: {formatMoney(p.newAmount, p.currency)} {cadence(sub)}
              {p.taxBehavior === 'INCLUSIVE' ? ' including GST' : p.taxAmount ? ' before GST' : ''}.
            </Text>
          </Card>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Keep current plan
          </Button>
          <Button
            disabled={!p}
            loading={change.fetching}
            onClick={async () => {
              const r = await runChange({ id: sub.id, priceId: priceId! });
              if (r.data) {
                onClose();
                onChanged();
              }
            }}
          >
            Confirm change
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

const InvoicePdf = graphql(`
  query PortalInvoicePdf($id: ID!) {
    portalInvoicePdf(id: $id) {
      filename
      contentType
      base64
    }
  }
`);

function DocumentRow({ doc }: { doc: PortalDoc }) {
  const client = useClient();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CombinedError | null>(null);
  const download = async () => {
    setBusy(true);
    const r = await client.query(InvoicePdf, { id: doc.id }, { requestPolicy: 'network-only' }).toPromise();
    setBusy(false);
    setError(r.error ?? null);
    const pdf = r.data?.portalInvoicePdf;
    if (pdf) downloadBase64(pdf.base64, pdf.contentType, pdf.filename);
  };
  return (
    <Card withBorder padding="sm">
      <Group justify="space-between" wrap="wrap">
        <div>
          <Text fw={600} size="sm">
            {doc.type === 'CREDIT_NOTE' ? 'Credit note' : 'Invoice'} {doc.number}
          </Text>
          <Text size="xs" c="dimmed">
            <Day at={doc.issuedAt} /> · <Money amount={doc.total} currency={doc.currency} />
          </Text>
        </div>
        <Group gap="xs">
          <StatusBadge status={doc.status} />
          <Button size="xs" variant="default" loading={busy} onClick={download}>
            Download PDF
          </Button>
        </Group>
      </Group>
      <ErrorNote error={error} />
    </Card>
  );
}

/**
 * A command the customer confirms first: what it does, a way to keep things as they are, and the red button. Closes
 * after the command answers; `onDone` when it succeeded (its answer carried data).
 */
function Confirm(p: {
  opened: boolean;
  title: string;
  keep: string;
  confirm: string;
  busy: boolean;
  onClose: () => void;
  onConfirm: () => Promise<unknown>;
  onDone: () => void;
  children: React.ReactNode;
}) {
  return (
    <Modal opened={p.opened} onClose={p.onClose} title={p.title}>
      <Stack>
        <Text size="sm">{p.children}</Text>
        <Group justify="flex-end">
          <Button variant="default" onClick={p.onClose}>
            {p.keep}
          </Button>
          <Button
            color="red"
            loading={p.busy}
            onClick={async () => {
              const done = await p.onConfirm();
              p.onClose();
              if (done) p.onDone();
            }}
          >
            {p.confirm}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
