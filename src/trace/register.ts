/**
 * @module forkpoint/register — `node --import forkpoint/register agent.js` records every
 * fetch / http / https call of the agent (LLM APIs as `llm` steps), or, started by
 * `forkpoint replay`, serves them from the recording with the network closed.
 */
import { installFromEnv } from './record/installFromEnv.js'

installFromEnv()
