/* eslint-disable */
import * as types from './graphql';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  query DashboardMerchant {\n    merchant {\n      id\n      name\n      reportingCurrency\n    }\n  }\n": typeof types.DashboardMerchantDocument,
    "\n  mutation DevelopersRollApiKey($graceSeconds: Int!) {\n    rollApiKey(graceSeconds: $graceSeconds) {\n      secretKey\n      last4\n      mode\n      previousKeyExpiresAt\n    }\n  }\n": typeof types.DevelopersRollApiKeyDocument,
    "\n  query UsageActiveSubscriptions($after: String) {\n    subscriptions(status: ACTIVE, first: 10, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          customerId\n          amount\n          currency\n          currentPeriodEnd\n        }\n      }\n    }\n  }\n": typeof types.UsageActiveSubscriptionsDocument,
    "\n  query DevelopersTestClock {\n    testClock {\n      now\n      advanceTarget\n      advanceInterruptedAt\n    }\n  }\n": typeof types.DevelopersTestClockDocument,
    "\n  mutation DevelopersAdvanceTestClock($seconds: Int!) {\n    advanceTestClock(seconds: $seconds) {\n      now\n      advanceTarget\n      advanceInterruptedAt\n    }\n  }\n": typeof types.DevelopersAdvanceTestClockDocument,
    "\n  mutation WebhooksTriggerTest($type: String, $endpointId: ID) {\n    triggerTestWebhook(type: $type, endpointId: $endpointId) {\n      eventId\n      type\n      deliveries {\n        id\n        endpointId\n        status\n      }\n    }\n  }\n": typeof types.WebhooksTriggerTestDocument,
    "\n  query WebhooksTestEndpointChoices {\n    webhookEndpoints(first: 100) {\n      edges {\n        node {\n          id\n          url\n          enabled\n        }\n      }\n    }\n  }\n": typeof types.WebhooksTestEndpointChoicesDocument,
    "\n  query UsageSummaryOfSubscription($id: ID!) {\n    subscription(id: $id) {\n      id\n      status\n      currency\n      planId\n      trialStart\n      trialEnd\n    }\n    usageSummary(subscriptionId: $id) {\n      subscriptionId\n      aggregations {\n        id\n        billingPeriodStart\n        billingPeriodEnd\n        eventType\n        unit\n        eventCount\n        totalQuantity\n        totalQuantityDecimal\n      }\n    }\n  }\n": typeof types.UsageSummaryOfSubscriptionDocument,
    "\n  query UsagePlanRates($planId: ID!) {\n    plan(id: $planId) {\n      id\n      name\n      usageRates {\n        id\n        eventType\n        currency\n        unitAmountDecimal\n      }\n    }\n  }\n": typeof types.UsagePlanRatesDocument,
    "\n  query WebhooksDeliveries($after: String, $endpointId: ID, $status: WebhookDeliveryStatus) {\n    webhookDeliveries(first: 10, after: $after, endpointId: $endpointId, status: $status) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          endpointId\n          eventId\n          eventType\n          status\n          attempts\n          responseStatus\n          error\n          latencyMs\n          createdAt\n          lastAttemptAt\n          nextAttemptAt\n          attemptLog {\n            attempt\n            attemptedAt\n            responseStatus\n            latencyMs\n            error\n            responseBody\n          }\n        }\n      }\n    }\n  }\n": typeof types.WebhooksDeliveriesDocument,
    "\n  query WebhooksEndpointChoices {\n    webhookEndpoints(first: 100) {\n      edges {\n        node {\n          id\n          url\n        }\n      }\n    }\n  }\n": typeof types.WebhooksEndpointChoicesDocument,
    "\n  mutation WebhooksRetryDelivery($id: ID!) {\n    retryWebhookDelivery(id: $id) {\n      id\n      status\n      attempts\n      responseStatus\n      error\n      lastAttemptAt\n      nextAttemptAt\n    }\n  }\n": typeof types.WebhooksRetryDeliveryDocument,
    "\n  query WebhooksEndpoints($after: String) {\n    webhookEndpoints(first: 10, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          url\n          description\n          enabled\n          disabledReason\n          enabledEvents\n          previousSecretExpiresAt\n          createdAt\n        }\n      }\n    }\n  }\n": typeof types.WebhooksEndpointsDocument,
    "\n  mutation WebhooksCreateEndpoint($input: CreateWebhookEndpointInput!) {\n    createWebhookEndpoint(input: $input) {\n      id\n      url\n      secret\n      enabled\n      enabledEvents\n    }\n  }\n": typeof types.WebhooksCreateEndpointDocument,
    "\n  mutation WebhooksToggleEndpoint($id: ID!, $enabled: Boolean!) {\n    toggleWebhookEndpoint(id: $id, enabled: $enabled) {\n      id\n      enabled\n      disabledReason\n    }\n  }\n": typeof types.WebhooksToggleEndpointDocument,
    "\n  mutation WebhooksRollSecret($id: ID!) {\n    rollWebhookEndpointSecret(id: $id) {\n      id\n      url\n      secret\n      previousSecretExpiresAt\n    }\n  }\n": typeof types.WebhooksRollSecretDocument,
    "\n  mutation WebhooksDeleteEndpoint($id: ID!) {\n    deleteWebhookEndpoint(id: $id) {\n      id\n      deleted\n    }\n  }\n": typeof types.WebhooksDeleteEndpointDocument,
    "\n  query DashboardOverview {\n    mrr(interval: MONTH) {\n      currency\n      mrr\n      arr\n      activeSubscriptions\n      payingCustomers\n      arpu\n      asOf\n      movements {\n        new\n        expansion\n        reactivation\n        contraction\n        churn\n        netNew\n      }\n      series {\n        periodEnd\n        mrr\n        new\n        expansion\n        reactivation\n        contraction\n        churn\n      }\n    }\n  }\n": typeof types.DashboardOverviewDocument,
};
const documents: Documents = {
    "\n  query DashboardMerchant {\n    merchant {\n      id\n      name\n      reportingCurrency\n    }\n  }\n": types.DashboardMerchantDocument,
    "\n  mutation DevelopersRollApiKey($graceSeconds: Int!) {\n    rollApiKey(graceSeconds: $graceSeconds) {\n      secretKey\n      last4\n      mode\n      previousKeyExpiresAt\n    }\n  }\n": types.DevelopersRollApiKeyDocument,
    "\n  query UsageActiveSubscriptions($after: String) {\n    subscriptions(status: ACTIVE, first: 10, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          customerId\n          amount\n          currency\n          currentPeriodEnd\n        }\n      }\n    }\n  }\n": types.UsageActiveSubscriptionsDocument,
    "\n  query DevelopersTestClock {\n    testClock {\n      now\n      advanceTarget\n      advanceInterruptedAt\n    }\n  }\n": types.DevelopersTestClockDocument,
    "\n  mutation DevelopersAdvanceTestClock($seconds: Int!) {\n    advanceTestClock(seconds: $seconds) {\n      now\n      advanceTarget\n      advanceInterruptedAt\n    }\n  }\n": types.DevelopersAdvanceTestClockDocument,
    "\n  mutation WebhooksTriggerTest($type: String, $endpointId: ID) {\n    triggerTestWebhook(type: $type, endpointId: $endpointId) {\n      eventId\n      type\n      deliveries {\n        id\n        endpointId\n        status\n      }\n    }\n  }\n": types.WebhooksTriggerTestDocument,
    "\n  query WebhooksTestEndpointChoices {\n    webhookEndpoints(first: 100) {\n      edges {\n        node {\n          id\n          url\n          enabled\n        }\n      }\n    }\n  }\n": types.WebhooksTestEndpointChoicesDocument,
    "\n  query UsageSummaryOfSubscription($id: ID!) {\n    subscription(id: $id) {\n      id\n      status\n      currency\n      planId\n      trialStart\n      trialEnd\n    }\n    usageSummary(subscriptionId: $id) {\n      subscriptionId\n      aggregations {\n        id\n        billingPeriodStart\n        billingPeriodEnd\n        eventType\n        unit\n        eventCount\n        totalQuantity\n        totalQuantityDecimal\n      }\n    }\n  }\n": types.UsageSummaryOfSubscriptionDocument,
    "\n  query UsagePlanRates($planId: ID!) {\n    plan(id: $planId) {\n      id\n      name\n      usageRates {\n        id\n        eventType\n        currency\n        unitAmountDecimal\n      }\n    }\n  }\n": types.UsagePlanRatesDocument,
    "\n  query WebhooksDeliveries($after: String, $endpointId: ID, $status: WebhookDeliveryStatus) {\n    webhookDeliveries(first: 10, after: $after, endpointId: $endpointId, status: $status) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          endpointId\n          eventId\n          eventType\n          status\n          attempts\n          responseStatus\n          error\n          latencyMs\n          createdAt\n          lastAttemptAt\n          nextAttemptAt\n          attemptLog {\n            attempt\n            attemptedAt\n            responseStatus\n            latencyMs\n            error\n            responseBody\n          }\n        }\n      }\n    }\n  }\n": types.WebhooksDeliveriesDocument,
    "\n  query WebhooksEndpointChoices {\n    webhookEndpoints(first: 100) {\n      edges {\n        node {\n          id\n          url\n        }\n      }\n    }\n  }\n": types.WebhooksEndpointChoicesDocument,
    "\n  mutation WebhooksRetryDelivery($id: ID!) {\n    retryWebhookDelivery(id: $id) {\n      id\n      status\n      attempts\n      responseStatus\n      error\n      lastAttemptAt\n      nextAttemptAt\n    }\n  }\n": types.WebhooksRetryDeliveryDocument,
    "\n  query WebhooksEndpoints($after: String) {\n    webhookEndpoints(first: 10, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          url\n          description\n          enabled\n          disabledReason\n          enabledEvents\n          previousSecretExpiresAt\n          createdAt\n        }\n      }\n    }\n  }\n": types.WebhooksEndpointsDocument,
    "\n  mutation WebhooksCreateEndpoint($input: CreateWebhookEndpointInput!) {\n    createWebhookEndpoint(input: $input) {\n      id\n      url\n      secret\n      enabled\n      enabledEvents\n    }\n  }\n": types.WebhooksCreateEndpointDocument,
    "\n  mutation WebhooksToggleEndpoint($id: ID!, $enabled: Boolean!) {\n    toggleWebhookEndpoint(id: $id, enabled: $enabled) {\n      id\n      enabled\n      disabledReason\n    }\n  }\n": types.WebhooksToggleEndpointDocument,
    "\n  mutation WebhooksRollSecret($id: ID!) {\n    rollWebhookEndpointSecret(id: $id) {\n      id\n      url\n      secret\n      previousSecretExpiresAt\n    }\n  }\n": types.WebhooksRollSecretDocument,
    "\n  mutation WebhooksDeleteEndpoint($id: ID!) {\n    deleteWebhookEndpoint(id: $id) {\n      id\n      deleted\n    }\n  }\n": types.WebhooksDeleteEndpointDocument,
    "\n  query DashboardOverview {\n    mrr(interval: MONTH) {\n      currency\n      mrr\n      arr\n      activeSubscriptions\n      payingCustomers\n      arpu\n      asOf\n      movements {\n        new\n        expansion\n        reactivation\n        contraction\n        churn\n        netNew\n      }\n      series {\n        periodEnd\n        mrr\n        new\n        expansion\n        reactivation\n        contraction\n        churn\n      }\n    }\n  }\n": types.DashboardOverviewDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DashboardMerchant {\n    merchant {\n      id\n      name\n      reportingCurrency\n    }\n  }\n"): (typeof documents)["\n  query DashboardMerchant {\n    merchant {\n      id\n      name\n      reportingCurrency\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DevelopersRollApiKey($graceSeconds: Int!) {\n    rollApiKey(graceSeconds: $graceSeconds) {\n      secretKey\n      last4\n      mode\n      previousKeyExpiresAt\n    }\n  }\n"): (typeof documents)["\n  mutation DevelopersRollApiKey($graceSeconds: Int!) {\n    rollApiKey(graceSeconds: $graceSeconds) {\n      secretKey\n      last4\n      mode\n      previousKeyExpiresAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query UsageActiveSubscriptions($after: String) {\n    subscriptions(status: ACTIVE, first: 10, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          customerId\n          amount\n          currency\n          currentPeriodEnd\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query UsageActiveSubscriptions($after: String) {\n    subscriptions(status: ACTIVE, first: 10, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          customerId\n          amount\n          currency\n          currentPeriodEnd\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DevelopersTestClock {\n    testClock {\n      now\n      advanceTarget\n      advanceInterruptedAt\n    }\n  }\n"): (typeof documents)["\n  query DevelopersTestClock {\n    testClock {\n      now\n      advanceTarget\n      advanceInterruptedAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DevelopersAdvanceTestClock($seconds: Int!) {\n    advanceTestClock(seconds: $seconds) {\n      now\n      advanceTarget\n      advanceInterruptedAt\n    }\n  }\n"): (typeof documents)["\n  mutation DevelopersAdvanceTestClock($seconds: Int!) {\n    advanceTestClock(seconds: $seconds) {\n      now\n      advanceTarget\n      advanceInterruptedAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation WebhooksTriggerTest($type: String, $endpointId: ID) {\n    triggerTestWebhook(type: $type, endpointId: $endpointId) {\n      eventId\n      type\n      deliveries {\n        id\n        endpointId\n        status\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation WebhooksTriggerTest($type: String, $endpointId: ID) {\n    triggerTestWebhook(type: $type, endpointId: $endpointId) {\n      eventId\n      type\n      deliveries {\n        id\n        endpointId\n        status\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WebhooksTestEndpointChoices {\n    webhookEndpoints(first: 100) {\n      edges {\n        node {\n          id\n          url\n          enabled\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query WebhooksTestEndpointChoices {\n    webhookEndpoints(first: 100) {\n      edges {\n        node {\n          id\n          url\n          enabled\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query UsageSummaryOfSubscription($id: ID!) {\n    subscription(id: $id) {\n      id\n      status\n      currency\n      planId\n      trialStart\n      trialEnd\n    }\n    usageSummary(subscriptionId: $id) {\n      subscriptionId\n      aggregations {\n        id\n        billingPeriodStart\n        billingPeriodEnd\n        eventType\n        unit\n        eventCount\n        totalQuantity\n        totalQuantityDecimal\n      }\n    }\n  }\n"): (typeof documents)["\n  query UsageSummaryOfSubscription($id: ID!) {\n    subscription(id: $id) {\n      id\n      status\n      currency\n      planId\n      trialStart\n      trialEnd\n    }\n    usageSummary(subscriptionId: $id) {\n      subscriptionId\n      aggregations {\n        id\n        billingPeriodStart\n        billingPeriodEnd\n        eventType\n        unit\n        eventCount\n        totalQuantity\n        totalQuantityDecimal\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query UsagePlanRates($planId: ID!) {\n    plan(id: $planId) {\n      id\n      name\n      usageRates {\n        id\n        eventType\n        currency\n        unitAmountDecimal\n      }\n    }\n  }\n"): (typeof documents)["\n  query UsagePlanRates($planId: ID!) {\n    plan(id: $planId) {\n      id\n      name\n      usageRates {\n        id\n        eventType\n        currency\n        unitAmountDecimal\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WebhooksDeliveries($after: String, $endpointId: ID, $status: WebhookDeliveryStatus) {\n    webhookDeliveries(first: 10, after: $after, endpointId: $endpointId, status: $status) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          endpointId\n          eventId\n          eventType\n          status\n          attempts\n          responseStatus\n          error\n          latencyMs\n          createdAt\n          lastAttemptAt\n          nextAttemptAt\n          attemptLog {\n            attempt\n            attemptedAt\n            responseStatus\n            latencyMs\n            error\n            responseBody\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query WebhooksDeliveries($after: String, $endpointId: ID, $status: WebhookDeliveryStatus) {\n    webhookDeliveries(first: 10, after: $after, endpointId: $endpointId, status: $status) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          endpointId\n          eventId\n          eventType\n          status\n          attempts\n          responseStatus\n          error\n          latencyMs\n          createdAt\n          lastAttemptAt\n          nextAttemptAt\n          attemptLog {\n            attempt\n            attemptedAt\n            responseStatus\n            latencyMs\n            error\n            responseBody\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WebhooksEndpointChoices {\n    webhookEndpoints(first: 100) {\n      edges {\n        node {\n          id\n          url\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query WebhooksEndpointChoices {\n    webhookEndpoints(first: 100) {\n      edges {\n        node {\n          id\n          url\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation WebhooksRetryDelivery($id: ID!) {\n    retryWebhookDelivery(id: $id) {\n      id\n      status\n      attempts\n      responseStatus\n      error\n      lastAttemptAt\n      nextAttemptAt\n    }\n  }\n"): (typeof documents)["\n  mutation WebhooksRetryDelivery($id: ID!) {\n    retryWebhookDelivery(id: $id) {\n      id\n      status\n      attempts\n      responseStatus\n      error\n      lastAttemptAt\n      nextAttemptAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WebhooksEndpoints($after: String) {\n    webhookEndpoints(first: 10, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          url\n          description\n          enabled\n          disabledReason\n          enabledEvents\n          previousSecretExpiresAt\n          createdAt\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query WebhooksEndpoints($after: String) {\n    webhookEndpoints(first: 10, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          url\n          description\n          enabled\n          disabledReason\n          enabledEvents\n          previousSecretExpiresAt\n          createdAt\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation WebhooksCreateEndpoint($input: CreateWebhookEndpointInput!) {\n    createWebhookEndpoint(input: $input) {\n      id\n      url\n      secret\n      enabled\n      enabledEvents\n    }\n  }\n"): (typeof documents)["\n  mutation WebhooksCreateEndpoint($input: CreateWebhookEndpointInput!) {\n    createWebhookEndpoint(input: $input) {\n      id\n      url\n      secret\n      enabled\n      enabledEvents\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation WebhooksToggleEndpoint($id: ID!, $enabled: Boolean!) {\n    toggleWebhookEndpoint(id: $id, enabled: $enabled) {\n      id\n      enabled\n      disabledReason\n    }\n  }\n"): (typeof documents)["\n  mutation WebhooksToggleEndpoint($id: ID!, $enabled: Boolean!) {\n    toggleWebhookEndpoint(id: $id, enabled: $enabled) {\n      id\n      enabled\n      disabledReason\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation WebhooksRollSecret($id: ID!) {\n    rollWebhookEndpointSecret(id: $id) {\n      id\n      url\n      secret\n      previousSecretExpiresAt\n    }\n  }\n"): (typeof documents)["\n  mutation WebhooksRollSecret($id: ID!) {\n    rollWebhookEndpointSecret(id: $id) {\n      id\n      url\n      secret\n      previousSecretExpiresAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation WebhooksDeleteEndpoint($id: ID!) {\n    deleteWebhookEndpoint(id: $id) {\n      id\n      deleted\n    }\n  }\n"): (typeof documents)["\n  mutation WebhooksDeleteEndpoint($id: ID!) {\n    deleteWebhookEndpoint(id: $id) {\n      id\n      deleted\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DashboardOverview {\n    mrr(interval: MONTH) {\n      currency\n      mrr\n      arr\n      activeSubscriptions\n      payingCustomers\n      arpu\n      asOf\n      movements {\n        new\n        expansion\n        reactivation\n        contraction\n        churn\n        netNew\n      }\n      series {\n        periodEnd\n        mrr\n        new\n        expansion\n        reactivation\n        contraction\n        churn\n      }\n    }\n  }\n"): (typeof documents)["\n  query DashboardOverview {\n    mrr(interval: MONTH) {\n      currency\n      mrr\n      arr\n      activeSubscriptions\n      payingCustomers\n      arpu\n      asOf\n      movements {\n        new\n        expansion\n        reactivation\n        contraction\n        churn\n        netNew\n      }\n      series {\n        periodEnd\n        mrr\n        new\n        expansion\n        reactivation\n        contraction\n        churn\n      }\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;