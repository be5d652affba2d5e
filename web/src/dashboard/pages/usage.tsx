import { PageTitle } from '../../lib/ui';

export function Usage() {
  return <PageTitle>Usage</PageTitle>;
}
