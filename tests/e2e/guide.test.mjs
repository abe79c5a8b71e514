// The user guide as a team that hosts the page hosts it: built by scripts/build-guide.sh into
// dist/guide/ and served beside the page. Every page of its table of contents opens in
// Chromium without a request to another origin (it works offline), the generated reference is
// there, and its search finds a command.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';
import { servedPage } from './lib.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const it = servedPage(root, { before, after }, serve, chromium);

/// The chapters SUMMARY.md lists, as the built pages' paths.
function chapters() {
  const summary = fs.readFileSync(path.join(root, 'docs/src/SUMMARY.md'), 'utf8');
  return [...summary.matchAll(/\]\(([^)]+)\.md\)/g)].map((m) => `${m[1]}.html`);
}

test('every chapter of the guide opens next to the page, offline', async () => {
  assert.ok(fs.existsSync(path.join(root, 'dist/guide/index.html')), 'dist/guide/ is not built: bash scripts/build-guide.sh');
  const ctx = await it.browser.newContext();
  const page = await ctx.newPage();
  const foreign = [];
  page.on('request', (r) => { if (!r.url().startsWith(it.url)) foreign.push(r.url()); });
  const list = chapters();
  assert.ok(list.length >= 20, `SUMMARY.md lists ${list.length} chapters`);
  for (const c of list) {
    const res = await page.goto(`${it.url}guide/${c}`);
    assert.equal(res.status(), 200, `guide/${c}`);
    const h1 = await page.locator('main h1').first().textContent();
    assert.ok(h1 && h1.trim().length > 0, `guide/${c} has no heading`);
  }
  await page.goto(`${it.url}guide/reference/commands.html`);
  const text = await page.locator('main').textContent();
  for (const c of ['sloscope run', 'sloscope analyze', 'sloscope compare', 'sloscope gate', 'sloscope k8s', 'Exit codes:']) {
    assert.ok(text.includes(c), `the commands reference lacks ${c}`);
  }
  assert.deepEqual(foreign, [], 'the guide asked another origin for something');
  await ctx.close();
});

test("the guide's search finds the compare command", async () => {
  const ctx = await it.browser.newContext();
  const page = await ctx.newPage();
  await page.goto(`${it.url}guide/index.html`);
  await page.locator('#mdbook-search-toggle').click();
  await page.locator('#mdbook-searchbar').pressSequentially('regression', { delay: 20 });
  const hits = page.locator('#mdbook-searchresults li');
  await hits.first().waitFor({ timeout: 10000 });
  const all = (await hits.allTextContents()).join('\n');
  assert.match(all, /compare/i, `search for "regression" found: ${all.slice(0, 400)}`);
  await ctx.close();
});
