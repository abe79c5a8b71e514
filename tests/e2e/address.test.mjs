// End to end: result files named by the page's address (`?src=…` and `#src=…`, once per file),
// as a CI artefact served next to the page opens. They load as dropped files do and read as
// `sloscope analyze` reads them; a file of another origin, a folder and a missing file are
// refused by name, and nothing is requested from another origin.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';
import { servedPage, newPage, waitLoaded, checkAgainstCli } from './lib.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const sloscope = path.resolve(process.env.SLOSCOPE_BIN || path.join(root, 'target/debug/sloscope'));
const examples = path.join(root, 'static/examples');
const it = servedPage(root, { before, after }, serve, chromium);

/// The example set's files as the page's address names them: `examples/…`, beside the page.
function sources() {
  const out = [];
  const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) { const p = path.join(d, e.name); if (e.isDirectory()) walk(p); else if (p.endsWith('.json')) out.push(p); } };
  walk(examples);
  return out.sort().map((p) => `examples/${path.relative(examples, p)}`);
}

test('?src= and #src= open the files the address names, read as sloscope analyze reads them', async () => {
  const expected = JSON.parse(execFileSync(sloscope, ['analyze', examples, '--format', 'json']).toString());
  const src = sources();
  const half = Math.ceil(src.length / 2);
  const query = src.slice(0, half).map((s) => `src=${encodeURIComponent(s)}`).join('&');
  const hash = src.slice(half).map((s) => `src=${encodeURIComponent(s)}`).join('&');
  const ctx = await it.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, errors } = await newPage(ctx, it.url);
  await page.goto(`${it.url}?${query}#${hash}`);
  await waitLoaded(page, src.length);
  assert.equal(await page.locator('#file-list li.bad').count(), 0);
  await checkAgainstCli(page, expected);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('a file of another origin, a folder or a missing file is refused by name, and nothing is fetched elsewhere', async () => {
  for (const [src, said] of [
    ['http://example.invalid/run.json', /only files of its own origin/],
    ['examples/runs/', /a folder cannot be listed/],
    ['examples/no-such-file.json', /could not be fetched: HTTP 404/],
  ]) {
    const ctx = await it.browser.newContext();
    const { page, errors } = await newPage(ctx, it.url);
    await page.goto(`${it.url}?src=${encodeURIComponent(src)}`);
    const status = page.locator('#share-status');
    await status.waitFor({ timeout: 30000 });
    const text = await status.textContent();
    assert.match(text, said, text);
    assert.ok(text.includes(src), `the status names ${src}: ${text}`);
    // The missing file's 404 is the browser's own console line; nothing else may be.
    assert.deepEqual(errors.filter((e) => !/404/.test(e)), []);
    await ctx.close();
  }
});
