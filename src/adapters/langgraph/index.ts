export { ForkpointSaver, type ForkpointSaverOptions, type ForkThreadOptions, type ForkedThread } from './ForkpointSaver.js'
