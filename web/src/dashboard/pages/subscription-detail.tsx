import { PageTitle } from '../../lib/ui';

export function SubscriptionDetail() {
  return <PageTitle>SubscriptionDetail</PageTitle>;
}
