import { useState } from 'react';
import { Stack } from '@mantine/core';
import { useQuery } from 'urql';
import { useLocation, useSearch } from 'wouter';
import { PageTitle, usePager } from '../../lib/ui';
import { EntitlementsList } from '../components/growth/EntitlementsList';
import { ExperimentDetail } from '../components/growth/ExperimentDetail';
import { ExperimentsList } from '../components/growth/ExperimentsList';
import { OfferingsList } from '../components/growth/OfferingsList';
import { OfferingsQuery } from '../components/growth/offerings-query';
import { PaywallPreview } from '../components/growth/PaywallPreview';

/**
 * Growth (docs/growth.md): entitlements, offerings with their packages and a live paywall preview, and experiments.
 * One experiment opens at /growth?experiment=<id>, so its results can be linked to.
 */
export function Growth() {
  const search = useSearch();
  const [, navigate] = useLocation();
  const experimentId = new URLSearchParams(search).get('experiment');
  if (experimentId) return <ExperimentDetail id={experimentId} onBack={() => navigate('/growth')} />;
  return <GrowthHome onOpen={(id) => navigate(`/growth?experiment=${encodeURIComponent(id)}`)} />;
}

function GrowthHome({ onOpen }: { onOpen: (id: string) => void }) {
  const pager = usePager();
  const [{ data, error, fetching }] = useQuery({ query: OfferingsQuery, variables: { first: 10, after: pager.after } });
  const offerings = data?.offerings.edges.map((e) => e.node);
  const [picked, setPicked] = useState<string | null>(null);
  // The preview shows the picked offering, else the current one, else the newest.
  const previewed = offerings?.find((o) => o.id === picked) ?? offerings?.find((o) => o.isCurrent) ?? offerings?.[0];
  return (
    <Stack>
      <PageTitle>Growth</PageTitle>
      <EntitlementsList />
      <OfferingsList
        offerings={offerings}
        pageInfo={data?.offerings.pageInfo}
        totalCount={data?.offerings.totalCount}
        pager={pager}
        error={error}
        fetching={fetching}
        selectedId={previewed?.id ?? null}
        onPreview={setPicked}
      />
      {previewed && <PaywallPreview key={previewed.id} offering={previewed} />}
      <ExperimentsList onOpen={onOpen} />
    </Stack>
  );
}
