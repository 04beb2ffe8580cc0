/**
 * Which requests an HTTP server on this machine answers, against DNS rebinding: a page on another site whose name
 * resolves to 127.0.0.1 reaches a loopback server with its own Host header, and a browser page anywhere sends its
 * own Origin. Only the hosts the server is known by, and only origins allowed by name, are served. The MCP
 * Streamable HTTP transport's specification requires servers to validate Origin.
 */

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\]|::1)$/i;

/** Whether a host name (without port) is loopback: localhost, 127.x.x.x or ::1. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOST.test(host);
}

/** The Host and Origin headers an MCP HTTP server accepts, against DNS rebinding and foreign pages. */
export interface OriginPolicy {
  /** `host:port` values the Host header may carry. */
  allowedHosts: readonly string[];
  /** Origins (`scheme://host:port`) a browser page may call from; a request without Origin is not a page's. */
  allowedOrigins: readonly string[];
}

/**
 * The policy of a server bound to `host:port`: what was configured, else the loopback names with the port (and
 * their http origins). A server bound beyond loopback must be told the names its clients use.
 */
export function originPolicy(
  bound: { host: string; port: number },
  configured: { allowedHosts?: readonly string[]; allowedOrigins?: readonly string[] } = {},
): OriginPolicy {
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].map((name) => `${name}:${bound.port}`);
  if (!configured.allowedHosts?.length && !isLoopbackHost(bound.host)) {
    throw new Error(
      `bound to ${bound.host}, beyond loopback: name the hosts clients reach it by (allowedHosts, e.g. ` +
        `mcp.example.com:${bound.port}), so that no other name is served`,
    );
  }
  const allowedHosts = configured.allowedHosts?.length ? configured.allowedHosts : loopback;
  return {
    allowedHosts: allowedHosts.map((h) => h.toLowerCase()),
    allowedOrigins: configured.allowedOrigins ?? loopback.map((h) => `http://${h}`),
  };
}

/**
 * Why the request is refused, with its HTTP status (421: not this server's name; 403: a foreign page), or undefined.
 */
export function originProblem(
  headers: { host?: string | undefined; origin?: string | undefined },
  policy: OriginPolicy,
): { status: 421 | 403; message: string } | undefined {
  const host = (headers.host ?? '').toLowerCase();
  if (!policy.allowedHosts.includes(host)) {
    return { status: 421, message: `this server does not answer to the host ${host || '(none)'}` };
  }
  const origin = headers.origin;
  if (origin !== undefined && !policy.allowedOrigins.includes(origin)) {
    return { status: 403, message: `requests from pages of ${origin} are not allowed` };
  }
  return undefined;
}
