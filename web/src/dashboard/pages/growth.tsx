import { PageTitle } from '../../lib/ui';

export function Growth() {
  return <PageTitle>Growth</PageTitle>;
}
