import { useQuery } from 'urql';
import { graphql } from '../../../gql';

const EventTypes = graphql(`
  query WebhookEventTypes {
    webhookEventTypes
  }
`);

/** The event kinds Cadence sends, as the API lists them: the choices for an endpoint's events and a test event. */
export function useEventTypes(): string[] {
  const [result] = useQuery({ query: EventTypes });
  return result.data?.webhookEventTypes ?? [];
}

/** Endpoint filters: every event, a family by prefix, or one kind. */
export const eventFilters = (types: string[]) => [
  '*',
  'payment.*',
  'subscription.*',
  'invoice.*',
  'e_invoice.*',
  ...types,
];
