/**
 * The methods the app's routes take for a path, read from express 5's router (its `router.stack`
 * of layers, each with `match(path)` and, for a route, `route.methods`): what a 405 needs to say in
 * `Allow`. express has no public way to ask; this file is the one place that reads its insides.
 */
interface Layer {
  route?: { methods: Record<string, boolean> };
  match(path: string): boolean;
}

export function routeMethods(app: unknown, path: string): string[] {
  const stack = (app as { router?: { stack?: Layer[] } } | undefined)?.router?.stack ?? [];
  const methods = new Set<string>();
  for (const layer of stack) {
    if (!layer.route || !layer.match(path)) continue;
    for (const [m, on] of Object.entries(layer.route.methods))
      if (on && m !== '_all') methods.add(m.toUpperCase());
  }
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}
