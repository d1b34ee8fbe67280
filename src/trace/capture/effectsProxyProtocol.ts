/**
 * How an agent's HTTP reaches the effects proxy (src/effects/effectsProxy.ts): here, below
 * both, so the agent-side capture and the Node hook name them from one place without
 * loading the proxy.
 */

/** Where the proxy listens, for the capture and the Node hook inside the agent. */
export const EFFECTS_PROXY_ENV = 'FORKPOINT_EFFECTS_PROXY'
/** The header that names a request's real URL, sent to the proxy in origin form. */
export const TARGET_HEADER = 'x-forkpoint-url'
