import type Razorpay from 'razorpay';

/** The axios request defaults the SDK's calls start from (base URL, timeout, agents, headers). */
export interface RazorpayRequestDefaults {
  baseURL?: string;
  timeout?: number;
  proxy?: unknown;
  maxRedirects?: number;
  httpAgent?: unknown;
  httpsAgent?: unknown;
  headers: { common: Record<string, string> };
}

/**
 * The Razorpay SDK's own HTTP client (`rzp.api`, undocumented): its axios instance's defaults, which are the only
 * way to give it a base URL, a timeout and an agent, and its `post`, for the sandbox's extension routes (the SDK's
 * auth, base URL and error shape). test/core/adapters.test.ts runs both against the installed SDK.
 */
type Api = {
  rq: { defaults: RazorpayRequestDefaults };
  post(params: { url: string; data: object }): Promise<Record<string, unknown>>;
};

export const razorpayRequestDefaults = (rzp: InstanceType<typeof Razorpay>): RazorpayRequestDefaults =>
  (rzp.api as unknown as Api).rq.defaults;

export const razorpayPost = (
  rzp: InstanceType<typeof Razorpay>,
  url: string,
  data: object,
): Promise<Record<string, unknown>> => (rzp.api as unknown as Api).post({ url, data });
