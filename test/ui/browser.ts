import { type Browser, type Page, chromium } from 'playwright-core'
import { expect } from 'vitest'

/** Debian's Chromium (`apt-get install chromium`, scripts/setup.sh); no browser is downloaded. */
export const CHROMIUM = '/usr/bin/chromium'

/**
 * Headless Chromium. Without the background-networking flags it reaches for Google's hosts
 * at start, and this machine's closed network refuses those connections many at a time.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
}

/** A page of a fixed size (the screenshots' size). */
export function openPage(browser: Browser): Promise<Page> {
  return browser.newPage({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 })
}

/** `expect.poll` with a deadline long enough for a machine busy with the whole suite (vitest's default is one second). */
export function poll<T>(read: () => T | Promise<T>): ReturnType<typeof expect.poll<T>> {
  return expect.poll(read, { timeout: 60_000, interval: 50 })
}
