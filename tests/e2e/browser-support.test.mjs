// The page's reader is built with WebAssembly SIMD: a browser without it gets a sentence naming
// what it lacks and the CLI command, not a blank page (simulated by making the feature check
// fail before the page's scripts run); with it, the page starts as usual.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';
import { servedPage } from './lib.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const it = servedPage(root, { before, after }, serve, chromium);

test('a browser without WebAssembly SIMD is told so, one with it gets the page', async () => {
  const ctx = await it.browser.newContext();
  const old = await ctx.newPage();
  await old.addInitScript(() => { WebAssembly.validate = () => false; });
  await old.goto(it.url);
  await old.waitForFunction(() => document.body.innerText.includes('WebAssembly SIMD'));
  const said = await old.evaluate(() => document.body.innerText);
  assert.match(said, /needs a browser with WebAssembly SIMD .*sloscope analyze FILES/);
  const current = await ctx.newPage();
  await current.goto(it.url);
  await current.waitForSelector('#file-input', { state: 'attached' });
  assert.doesNotMatch(await current.evaluate(() => document.body.innerText), /needs a browser/);
  await ctx.close();
});
