/** A layer of Express 5's router stack, as read here. */
export interface RouterLayer {
  route?: { path?: unknown; methods?: Record<string, boolean> };
  /** Truthy (the match) when the layer matches `path`. */
  match(path: string): unknown;
}

/**
 * The layers of an Express 5 application's router (`app.router.stack`, not public API), in the
 * order Express tries them: used to name the route of a request refused before routing.
 */
export function routerLayers(app: unknown): RouterLayer[] {
  return (app as { router?: { stack?: RouterLayer[] } } | undefined)?.router?.stack ?? [];
}

/** What no longer holds of routerLayers() on an application with routes (empty when it all does). */
export function expressRouterProblems(app: unknown): string[] {
  const layers = routerLayers(app);
  const routed = layers.filter((layer) => layer.route);
  return layers.length > 0 &&
    routed.length > 0 &&
    routed.every((layer) => typeof layer.match === 'function' && layer.route?.methods)
    ? []
    : ['Express router: app.router.stack has no route layers with match() and methods'];
}
