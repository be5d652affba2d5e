import { PageTitle } from '../../lib/ui';

export function Subscriptions() {
  return <PageTitle>Subscriptions</PageTitle>;
}
