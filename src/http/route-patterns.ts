/**
 * The app's routes by pattern, under any method: which pattern a path names (a 405 says which methods it allows), and
 * how a request is named in the log without what its path may carry. A path can hold a capability (a cart or approval
 * token, a checkout or order id: their pages are capability links), and a request that matches no route (a wrong
 * method, a doubled slash, another case, one segment too many) carries it just the same.
 */
import FindMyWay from 'find-my-way';

/** What stands in the log for a segment of an unmatched path that is not a word of the app's own routes. */
const REDACTED_SEGMENT = '*';
/** Logged paths are cut to this length (a URL may be up to 16 KiB of anything). */
const MAX_LOGGED_PATH = 200;

export class RoutePatterns {
  // Routed like the app's router (src/app.ts routerOptions): a trailing slash is ignored, a parameter of any length.
  private readonly router = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: Number.MAX_SAFE_INTEGER });
  private readonly methods = new Map<string, Set<string>>();
  /** Every literal segment of every route (`cart`, `approve`, `products.json`): the only words an unmatched path keeps. */
  private readonly words = new Set<string>();

  /** Adds a route (Fastify's onRoute hook calls it for each). */
  add(pattern: string, method: string | readonly string[]): void {
    let known = this.methods.get(pattern);
    if (!known) {
      this.methods.set(pattern, (known = new Set()));
      this.router.on('GET', pattern, () => {}, { pattern });
      for (const segment of pattern.split('/')) if (!/[:*]/.test(segment)) this.words.add(segment);
    }
    for (const each of typeof method === 'string' ? [method] : method) known.add(each);
  }

  /** The route a path names under any method: its pattern and the methods it answers; undefined when none does. */
  find(path: string): { pattern: string; methods: ReadonlySet<string> } | undefined {
    const found = this.router.find('GET', path);
    if (!found) return undefined;
    const { pattern } = found.store as { pattern: string };
    return { pattern, methods: this.methods.get(pattern)! };
  }

  /**
   * How a request is named in the log: the pattern of the route that answered it (`/cart/c/:token`); for a request
   * no route answered, the pattern of the route its path names under another method (a 405, a CORS preflight), else
   * its path with every segment that is not a literal word of some route replaced by `*` (`//checkout/approve/*`,
   * `/*` for an unknown page). Never the query.
   */
  loggedPath(url: string, route: string | undefined): string {
    if (route !== undefined) return route;
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    const named = this.find(path);
    if (named) return named.pattern;
    return path
      .split('/')
      .map((segment) => (segment === '' || this.words.has(segment) ? segment : REDACTED_SEGMENT))
      .join('/')
      .slice(0, MAX_LOGGED_PATH);
  }
}
