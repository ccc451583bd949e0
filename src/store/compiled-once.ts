// owns: the image path's statements built and compiled by Kysely once per shape and dialect, then run with each call's
// values; building and compiling a query (frozen nodes, spreads, SQL text) cost as much as running it (issue 28).
import type { CompiledQuery, Compilable, QueryResult } from 'kysely';
import type { Db } from './schema.ts';

/** Stands for argument `index` while the statement is compiled; each call puts its own value in its place. */
class Argument {
  constructor(readonly index: number) {}
}

/**
 * `build` called with placeholders instead of its arguments, compiled once per dialect (a transaction shares its
 * database's adapter) and `shape`; each call then binds its own arguments. `build` must use its arguments only as
 * values (compared, inserted, set), never to choose the statement's form: what does is `shape` (e.g. a column).
 */
export function compiledOnce<A extends unknown[], R>(
  arity: A['length'],
  build: (db: Db, shape: string, ...args: A) => Compilable<R>,
): (db: Db, shape: string, ...args: A) => Promise<QueryResult<R>> {
  const byAdapter = new WeakMap<object, Map<string, CompiledQuery<R>>>();
  return (db, shape, ...args) => {
    const executor = db.getExecutor();
    let byShape = byAdapter.get(executor.adapter);
    if (byShape === undefined) {
      byShape = new Map();
      byAdapter.set(executor.adapter, byShape);
    }
    let compiled = byShape.get(shape);
    if (compiled === undefined) {
      const placeholders = Array.from({ length: arity }, (_, i) => new Argument(i)) as A;
      compiled = build(db, shape, ...placeholders).compile();
      const bound = new Set(compiled.parameters.filter((p) => p instanceof Argument));
      if (bound.size !== arity)
        throw new Error(`compiledOnce: the statement binds ${bound.size} of ${arity} arguments`);
      byShape.set(shape, compiled);
    }
    const parameters = compiled.parameters.map((p) => (p instanceof Argument ? args[p.index] : p));
    return executor.executeQuery<R>({ ...compiled, parameters });
  };
}
