import { Suspense, useEffect, useMemo, useState } from 'react';
import { AppShell, Burger, Button, Group, NavLink, SegmentedControl, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { Provider, useQuery } from 'urql';
import { Link, Route, Router, Switch, useLocation } from 'wouter';
import { graphql } from '../gql';
import { makeClient } from '../lib/client';
import { isAuthError } from '../lib/errors';
import { clearKeys, loadKeys, saveKeys, type KeyRing, type Mode } from '../lib/session';
import { ErrorNote, Loading } from '../lib/ui';
import { KeyForm } from './KeyForm';
import { PAGES, ROUTES } from './pages';

/**
 * The merchant dashboard (docs/dashboard.md): a key kept for this browser session, then the pages, every one built
 * on the public GraphQL API with that key. The mode switch selects the test or live key (asking for it once).
 */
export function App() {
  const [ring, setRing] = useState<KeyRing>(loadKeys);
  const [refused, setRefused] = useState(false);
  const key = ring[ring.mode];
  const update = (next: KeyRing) => {
    saveKeys(next);
    setRing(next);
  };
  const signOut = () => {
    clearKeys();
    setRing({ mode: 'test' });
  };
  const switchMode = (mode: Mode) => update({ ...ring, mode });

  // A key the service refuses (rolled, or mistyped) is forgotten and asked for again.
  // A key rolled from this dashboard (Developers) is already stored: switch to it rather than ask.
  const onRefused = () => {
    const stored = loadKeys();
    if (stored[stored.mode] && stored[stored.mode] !== key) return setRing(stored);
    update({ ...ring, [ring.mode]: undefined });
    setRefused(true);
  };

  if (!key)
    return (
      <KeyForm
        mode={ring.mode}
        refused={refused}
        onKey={(k, mode) => {
          setRefused(false);
          update({ ...ring, mode, [mode]: k });
        }}
        onMode={switchMode}
      />
    );
  return (
    <Signed key={key} token={key} mode={ring.mode} onMode={switchMode} onSignOut={signOut} onRefused={onRefused} />
  );
}

const MerchantQuery = graphql(`
  query DashboardMerchant {
    merchant {
      id
      name
      reportingCurrency
    }
  }
`);

type ShellProps = { mode: Mode; onMode: (m: Mode) => void; onSignOut: () => void; onRefused: () => void };

function Signed(props: ShellProps & { token: string }) {
  const { client, dispose } = useMemo(() => makeClient(props.token), [props.token]);
  useEffect(() => dispose, [dispose]);
  return (
    <Provider value={client}>
      <Router base="/dashboard">
        <Shell {...props} />
      </Router>
    </Provider>
  );
}

function Shell({ mode, onMode, onSignOut, onRefused }: ShellProps) {
  const [opened, { toggle, close }] = useDisclosure();
  const [{ data, error }] = useQuery({ query: MerchantQuery });
  const [location] = useLocation();
  const refused = isAuthError(error);
  useEffect(() => {
    if (refused) onRefused();
  }, [refused, onRefused]);
  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }}
      padding="md"
    >
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between">
          <Group gap="sm">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Menu" />
            <Text fw={700}>Cadence</Text>
            <Text c="dimmed" size="sm" data-testid="merchant-name">
              {data?.merchant.name}
            </Text>
          </Group>
          <Group gap="sm">
            <SegmentedControl
              size="xs"
              value={mode}
              onChange={(v) => onMode(v as Mode)}
              data={[
                { label: 'Test', value: 'test' },
                { label: 'Live', value: 'live' },
              ]}
              aria-label="Mode"
            />
            <Button size="xs" variant="default" onClick={onSignOut}>
              Sign out
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" component="nav" aria-label="Dashboard">
        {PAGES.map((p) => (
          <NavLink
            key={p.path}
            component={Link}
            href={p.path}
            label={p.label}
            active={p.path === '/' ? location === '/' : location.startsWith(p.path)}
            onClick={close}
          />
        ))}
      </AppShell.Navbar>
      <AppShell.Main>
        <ErrorNote error={error} />
        <Suspense fallback={<Loading />}>
          <Switch>
            {ROUTES.map((r) => (
              <Route key={r.path} path={r.path} component={r.component} />
            ))}
            <Route>
              <Text>This page does not exist.</Text>
            </Route>
          </Switch>
        </Suspense>
      </AppShell.Main>
    </AppShell>
  );
}
