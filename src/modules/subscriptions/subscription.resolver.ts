/** GraphQL for subscriptions. */
export const subscriptionResolvers: Function[] = [];
