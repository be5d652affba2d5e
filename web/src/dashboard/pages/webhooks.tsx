import { PageTitle } from '../../lib/ui';

export function Webhooks() {
  return <PageTitle>Webhooks</PageTitle>;
}
