#!/usr/bin/env node
import { main } from './program.js'

process.exit(await main(process.argv))
