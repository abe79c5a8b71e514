// Regenerates the README's and the guide's screenshot (docs/src/screenshot.png) from the example set: the built page
// (dist/, `trunk build --release`) served on 127.0.0.1 with static/examples loaded, in Debian's
// Chromium at a laptop's width; the first screen, as a reader opening it sees it.
// Usage: node scripts/screenshot.mjs   (CHROMIUM=/path/to/chromium to use another browser)
import path from 'node:path';
import { chromium } from 'playwright-core';
import { serve } from '../tests/e2e/serve.mjs';
import { ARGS } from '../tests/e2e/lib.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const server = await serve(path.join(root, 'dist'), path.join(root, 'static/examples'));
const url = `http://127.0.0.1:${server.address().port}/`;
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ARGS });
try {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
  const page = await ctx.newPage();
  await page.goto(url);
  await page.waitForFunction(() => document.querySelector('main[data-ready="true"]') && !document.querySelector('#file-list li.loading'), null, { timeout: 60000 });
  await page.waitForTimeout(500);
  const out = path.join(root, 'docs/src/screenshot.png');
  await page.screenshot({ path: out });
  console.log(`screenshot: wrote ${path.relative(root, out)}`);
} finally {
  await browser.close();
  server.close();
}
