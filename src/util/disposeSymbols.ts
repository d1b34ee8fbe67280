/**
 * `Symbol.dispose` / `Symbol.asyncDispose` for Node 20 releases before 20.4, which lack
 * them: `await using` and the `[Symbol.asyncDispose]()` methods of our closables need
 * them. Node's own are these registered symbols, so both sides agree on any release.
 */
const symbols = Symbol as { dispose?: symbol; asyncDispose?: symbol }
symbols.dispose ??= Symbol.for('nodejs.dispose')
symbols.asyncDispose ??= Symbol.for('nodejs.asyncDispose')
