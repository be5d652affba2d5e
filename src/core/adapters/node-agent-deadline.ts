import type http from 'node:http';

type AddRequest = (this: http.Agent, req: http.ClientRequest, options: unknown) => void;

/**
 * Gives every request made through `agent` a wall-clock deadline: destroyed with `error()` `timeoutMs` after the
 * agent got it, unless it finished. SDKs take an agent but no per-request hook; Node's http client hands each
 * request to its agent's `addRequest`, a method Node does not document, wrapped here.
 * test/core/adapters.test.ts checks it with the installed Node.
 */
export function withRequestDeadline<A extends http.Agent>(agent: A, timeoutMs: number, error: () => Error): A {
  const target = agent as unknown as { addRequest: AddRequest };
  const addRequest = target.addRequest;
  if (typeof addRequest !== 'function')
    throw new Error("http.Agent has no addRequest: the gateway deadline can't be set");
  target.addRequest = function (req, opts) {
    const timer = setTimeout(() => {
      if (!req.destroyed) req.destroy(error());
    }, timeoutMs);
    const clear = () => clearTimeout(timer);
    req.once('close', clear);
    req.once('response', (res: http.IncomingMessage) => res.once('end', clear));
    return addRequest.call(this, req, opts);
  };
  return agent;
}
