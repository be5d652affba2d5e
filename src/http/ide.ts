import path from 'node:path';
import { Request, Response, Router } from 'express';
import { ruruHTML } from 'ruru/server';
import { serveStatic } from 'ruru/static';
import { labelRoute } from './route-label';

/**
 * The GraphQL IDE at /graphql for browsers (docs/api.md, "The GraphQL IDE"): ruru, GraphiQL's distribution, with
 * its assets and graphql-ws's browser build served from node_modules (no CDN: it works offline).
 *
 * Its page runs ruru with a fetcher of its own (IDE_SCRIPT below) that
 * - sends queries and mutations as POST /graphql and subscriptions over graphql-ws at /graphql, the IDE's headers as
 *   the socket's `connection_init` payload (where src/http/graphql-ws.ts reads the key);
 * - fetches the schema only once the headers hold a key, with those headers, and again whenever the key changes.
 * The headers are kept in the browser (GraphiQL's persisted headers), so other tabs and later visits have them.
 * In the demo setting (embedded database and its demo merchant, src/demo.ts) the page carries the demo merchant's
 * test key as its default headers; otherwise it carries no key and says where to get one.
 */

const STATIC_PATH = '/graphql-ide/';
const GRAPHQL_WS_SCRIPT = 'graphql-ws.min.js';
const GRAPHQL_WS_FILE = path.join(path.dirname(require.resolve('graphql-ws/package.json')), 'umd', GRAPHQL_WS_SCRIPT);

/** The first document of the demo IDE: a query to run at once, and a subscription to try (uncomment it, run it). */
export const DEMO_DOCUMENT = `# Cadence GraphQL: the demo merchant's test key is in the headers below. Run with Ctrl-Enter.
query Catalog {
  products(first: 10) {
    totalCount
    edges {
      node {
        id
        name
        status
        plans {
          id
          name
          billingInterval
          billingFrequency
          prices {
            id
            amount
            currency
          }
        }
      }
    }
  }
}

# Live changes arrive over WebSocket: uncomment, run, then change a subscription
# (for example POST /v1/subscriptions/{id}/pause).
# subscription Changes {
#   subscriptionUpdated {
#     id
#     status
#     currentPeriodEnd
#   }
# }
`;

/** Said where no key is embedded: where a merchant's key comes from. */
export const KEY_NOTE = `# Cadence GraphQL needs a secret key: put it in the headers below,
#   { "Authorization": "Bearer sk_test_..." }
# and the schema loads. Where to get one:
# - with the embedded database, \`npm start\` prints the demo merchant's test key;
# - else POST /v1/admin/merchants with the operator token (ADMIN_TOKEN) answers a new
#   merchant's keys (docs/api.md).
`;

/** The IDE's first document outside the demo setting: the note, then the demo's query. */
const KEYLESS_DOCUMENT = `${KEY_NOTE}\n${DEMO_DOCUMENT.slice(DEMO_DOCUMENT.indexOf('\n') + 1)}`;

/** Headers as the IDE's editor shows them. */
const headersText = (headers: Record<string, string>) => JSON.stringify(headers, null, 2);

/**
 * The page's own module script, in place of ruru's: it renders ruru with the fetcher described above. GraphiQL
 * fetches the schema when it mounts, before its headers editor exists (so without the headers), and again when its
 * `fetcher` prop changes; `schema: null` holds it back. So: no key, no fetch (no 401 on open); a new key, a new
 * fetcher; and until the headers are first edited, a request without the editor's headers gets the headers the
 * editor opens with (GraphiQL's: those kept from the last visit, else the page's default).
 */
const IDE_SCRIPT = `
import { React, createRoot, Ruru } from ${JSON.stringify(STATIC_PATH + 'ruru.js')};
const config = RURU_CONFIG;
const endpoint = new URL(config.endpoint, location.href).href;
const initialHeaders = localStorage.getItem("graphiql:headers") || config.defaultHeaders || "";
let headersEdited = false;

const parseHeaders = (text) => {
  try {
    const parsed = JSON.parse(text.trim() || "{}");
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
};
/** The Authorization header when it holds a Bearer key, "" when it holds none, undefined when unreadable. */
const keyOf = (text) => {
  const headers = parseHeaders(text);
  if (!headers) return undefined;
  const name = Object.keys(headers).find((k) => k.toLowerCase() === "authorization");
  const value = name === undefined ? "" : String(headers[name]).trim();
  return /^Bearer\\s+\\S+$/i.test(value) ? value : "";
};

let socket = null;
/** One graphql-ws client at a time, for the headers it was opened with (its connection_init payload). */
const socketFor = (headers) => {
  const id = JSON.stringify(headers);
  if (socket && socket.id === id) return socket.client;
  socket?.client.dispose();
  socket = { id, client: graphqlWs.createClient({ url: endpoint.replace(/^http/, "ws"), connectionParams: headers }) };
  return socket.client;
};
const isSubscription = (document, operationName) => {
  const operations = (document?.definitions ?? []).filter((d) => d.kind === "OperationDefinition");
  const operation = operationName
    ? operations.find((d) => d.name?.value === operationName)
    : operations.length === 1 ? operations[0] : undefined;
  return operation?.operation === "subscription";
};
const closedError = (event) =>
  new Error(event.code === 4403
    ? "The WebSocket was refused (4403): the Authorization header holds no valid key."
    : "The WebSocket closed (" + event.code + (event.reason ? " " + event.reason : "") + ").");

const makeFetcher = () => (params, opts = {}) => {
  const headers = opts.headers ?? (headersEdited ? {} : (parseHeaders(initialHeaders) ?? {}));
  if (isSubscription(opts.documentAST, params.operationName)) {
    const client = socketFor(headers);
    return {
      subscribe(sink) {
        const unsubscribe = client.subscribe(params, {
          next: (value) => sink.next(value),
          error: (err) => sink.error(err instanceof CloseEvent ? closedError(err) : err),
          complete: () => sink.complete(),
        });
        return { unsubscribe };
      },
    };
  }
  return fetch(endpoint, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", ...headers },
    body: JSON.stringify(params),
  }).then((res) => res.json());
};

const h = React.createElement;
function Ide() {
  const [key, setKey] = React.useState(() => keyOf(initialHeaders) ?? "");
  const onEditHeaders = React.useMemo(() => {
    let timer;
    return (text) => {
      headersEdited = true;
      clearTimeout(timer);
      timer = setTimeout(() => {
        const next = keyOf(text);
        if (next !== undefined) setKey(next);
      }, 400);
    };
  }, []);
  // A new fetcher for each key: GraphiQL fetches the schema again, with the key now in the headers.
  const fetcher = React.useMemo(() => makeFetcher(), [key]);
  // A new IDE tab starts with defaultHeaders: the headers the page opened with.
  return h(Ruru, { ...config, defaultHeaders: initialHeaders, fetcher, onEditHeaders, schema: key ? undefined : null });
}
createRoot(document.getElementById("ruru-root")).render(h(Ide));
`;

/** The IDE page; `demoKey`: the demo merchant's test key, put in its default headers. */
export function idePage(demoKey: string | null): string {
  return ruruHTML({
    endpoint: '/graphql',
    staticPath: STATIC_PATH,
    // Props for GraphiQL, which ruru passes its whole client config on to. (ruru's types make every prop of its
    // GraphiQL subset required, and leave some out.)
    clientConfig: {
      shouldPersistHeaders: true,
      defaultEditorToolsVisibility: 'headers',
      defaultQuery: demoKey ? DEMO_DOCUMENT : KEYLESS_DOCUMENT,
      defaultHeaders: headersText(demoKey ? { Authorization: `Bearer ${demoKey}` } : { Authorization: 'Bearer ' }),
    } as never,
    htmlParts: {
      titleTag: '<title>Cadence GraphQL IDE</title>',
      bodyInitScript: `<script src="${STATIC_PATH}${GRAPHQL_WS_SCRIPT}"></script>\n<script type="module">${IDE_SCRIPT}</script>`,
    },
  });
}

/** What the IDE shows that depends on how the service runs. */
export class GraphQLIde {
  /** The demo merchant's test key, in the demo setting (set once the demo merchant exists); else null. */
  demoKey: string | null = null;

  /** The page (GET /graphql asking for HTML without a query) and its assets (under /graphql-ide/). */
  router(): Router {
    const router = Router();
    // Not mounted at the path: serveStatic matches the full URL against its prefix itself; only IDE asset URLs reach it.
    const ruruAssets = serveStatic(STATIC_PATH);
    router.get(STATIC_PATH + GRAPHQL_WS_SCRIPT, (_req, res) => res.sendFile(GRAPHQL_WS_FILE));
    router.use((req, res, next) => {
      if (!req.path.startsWith(STATIC_PATH)) return next();
      labelRoute(res, `${STATIC_PATH}*`);
      return ruruAssets(req, res, next);
    });
    router.get('/graphql', (req: Request, res: Response, next) => {
      if (!req.accepts('html') || req.query.query) return next();
      // The demo key is a credential: the page is not cached.
      res.set('Cache-Control', 'no-store').type('html').send(idePage(this.demoKey));
    });
    return router;
  }
}
