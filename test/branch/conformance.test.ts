import { afterAll, beforeAll, describe } from 'vitest'
import { reflinkDir } from '../helpers/reflinkDir.js'
import { conformance } from './conformanceSuite.js'

/** Run as whoever runs the tests; conformance.unprivileged.test.ts runs this file again as `nobody`. */
describe('overlay backend', () => conformance('overlay', () => undefined))
describe('copy backend', () => conformance('copy', () => undefined))
describe('reflink backend', () => {
  let fsDir: ReturnType<typeof reflinkDir> | undefined
  beforeAll(() => {
    fsDir = reflinkDir()
  })
  afterAll(() => fsDir?.cleanup())
  conformance('reflink', () => fsDir!.dir)
})
