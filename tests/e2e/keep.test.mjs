// End to end: a reload keeps what was loaded. The example set (fetched text) and dropped files
// (the browser's own File handles) come back after a reload, read as `sloscope analyze` reads
// them, with Compare mode's sides and the pooling choice; Clear forgets them for good; a
// page whose address names its files (?src=) brings those, not the kept set.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';
import { servedPage, newPage, waitLoaded, checkAgainstCli, dropFiles } from './lib.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const sloscope = path.resolve(process.env.SLOSCOPE_BIN || path.join(root, 'target/debug/sloscope'));
const examples = path.join(root, 'static/examples');
const it = servedPage(root, { before, after }, serve, chromium);

function exampleFiles() {
  const out = [];
  const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) { const p = path.join(d, e.name); if (e.isDirectory()) walk(p); else if (p.endsWith('.json')) out.push(p); } };
  walk(examples);
  return out.sort().map((p) => ({ name: path.relative(examples, p), text: fs.readFileSync(p, 'utf8') }));
}

const count = (page) => page.locator('#file-list li.ok, #file-list li.bad').count();

/// The page after a reload, once it has had the time to restore (it takes drops by then).
async function reloaded(page) {
  await page.reload();
  await page.waitForSelector('html[data-drop-ready="true"]', { state: 'attached', timeout: 60000 });
}

test('a reload restores the example set and dropped files; Clear forgets them', async () => {
  const expected = JSON.parse(execFileSync(sloscope, ['analyze', examples, '--format', 'json']).toString());
  const n = exampleFiles().length;
  const ctx = await it.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, errors } = await newPage(ctx, it.url);
  await page.goto(it.url);
  await page.click('#load-example');
  await waitLoaded(page, n);
  await reloaded(page);
  await waitLoaded(page, n);
  await checkAgainstCli(page, expected);

  await page.click('#clear');
  // The kept set is written as the page changes, asynchronously: wait for Clear's write.
  await page.waitForFunction(() => new Promise((res) => {
    const r = indexedDB.open('sloscope', 1);
    r.onsuccess = () => { const g = r.result.transaction('loaded').objectStore('loaded').get('set'); g.onsuccess = () => res(g.result && g.result.files.length === 0); g.onerror = () => res(false); };
    r.onerror = () => res(false);
  }), null, { timeout: 10000 });
  await reloaded(page);
  await page.waitForTimeout(1500);
  assert.equal(await count(page), 0, 'Clear forgets the kept set');

  // Dropped files are kept as the browser's File handles, and read again after a reload.
  await dropFiles(page, exampleFiles());
  await waitLoaded(page, n);
  await reloaded(page);
  await waitLoaded(page, n);
  await checkAgainstCli(page, expected);

  // A refused file comes back refused: the reload does not turn "could not be read" into
  // "no run file was loaded".
  await page.click('#clear');
  const broken = exampleFiles().map((f) => (f.name.endsWith('latency--np4.json') ? { ...f, text: '{"kind": "run", "schema_ver' } : f));
  await dropFiles(page, broken);
  await waitLoaded(page, n);
  assert.equal(await page.locator('#file-list li.bad').count(), 1);
  await reloaded(page);
  await waitLoaded(page, n);
  assert.equal(await page.locator('#file-list li.bad').count(), 1);
  assert.match(await page.locator('.verdict[data-profile="latency"] ul.missing').textContent(), /could not be read/);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('another tool\'s file placed in the plan comes back placed', async () => {
  const ctx = await it.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, errors } = await newPage(ctx, it.url);
  await page.goto(it.url);
  const set = exampleFiles().filter((f) => !f.name.endsWith('latency--np4.json'));
  const vllm = { name: 'save-result.json', text: fs.readFileSync(path.join(root, 'tests/fixtures/peers/vllm/save-result.json'), 'utf8') };
  await dropFiles(page, [...set, vllm]);
  await waitLoaded(page, set.length + 1);
  await page.selectOption('#placing-table select[id$="-profile"]', 'latency');
  await page.selectOption('#placing-table select[id$="-candidate"]', 'np4');
  await page.waitForFunction(() => document.querySelector('#placing-table td.placed')?.textContent.startsWith('placed: latency · np4'));
  const missing = await page.locator('.verdict[data-profile="latency"] ul.missing').count();
  await page.waitForTimeout(300);
  await reloaded(page);
  await waitLoaded(page, set.length + 1);
  await page.waitForFunction(() => document.querySelector('#placing-table td.placed')?.textContent.startsWith('placed: latency · np4'), null, { timeout: 30000 });
  assert.equal(await page.inputValue('#placing-table select[id$="-profile"]'), 'latency');
  assert.equal(await page.inputValue('#placing-table select[id$="-candidate"]'), 'np4');
  assert.equal(await page.locator('.verdict[data-profile="latency"] ul.missing').count(), missing);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('Compare mode: each file comes back on its side; pooling comes back as chosen', async () => {
  const ctx = await it.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, errors } = await newPage(ctx, it.url);
  await page.goto(it.url);
  await page.waitForSelector('html[data-drop-ready="true"]', { state: 'attached', timeout: 60000 });
  const files = exampleFiles();
  await page.check('#compare-mode');
  await page.check('#side-before');
  await dropFiles(page, files);
  await waitLoaded(page, files.length);
  await page.check('#side-after');
  await dropFiles(page, files.slice(0, 3));
  await waitLoaded(page, files.length + 3);
  const sides = () => page.locator('#file-list li.file').evaluateAll((ls) => ls.map((l) => `${l.dataset.side} ${l.dataset.name}`));
  const before = await sides();
  assert.equal(before.filter((s) => s.startsWith('after ')).length, 3);
  await reloaded(page);
  await waitLoaded(page, files.length + 3);
  assert.ok(await page.isChecked('#compare-mode'), 'Compare mode is back');
  assert.deepEqual(await sides(), before);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('an address that names its files brings those, not the kept set', async () => {
  const ctx = await it.browser.newContext();
  const { page } = await newPage(ctx, it.url);
  await page.goto(it.url);
  await page.click('#load-example');
  await waitLoaded(page, exampleFiles().length);
  await page.goto(`${it.url}?src=${encodeURIComponent('examples/plan.json')}`);
  await waitLoaded(page, 1);
  await page.waitForTimeout(1000);
  assert.equal(await count(page), 1);
  await ctx.close();
});

test('a series hidden from a chart\'s legend stays hidden after a reload; Clear shows it again', async () => {
  const n = exampleFiles().length;
  const ctx = await it.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, errors } = await newPage(ctx, it.url);
  await page.goto(it.url);
  await page.click('#load-example');
  await waitLoaded(page, n);
  const marks = () => page.locator('#chart-latency-tradeoff').evaluate((c) => Number(c.dataset.marks));
  const opened = async () => {
    await page.locator('#more-charts-latency summary').click();
    await page.waitForSelector('#chart-latency-tradeoff[data-drawn="true"]');
  };
  await opened();
  const shown = await marks();
  // The last legend entry, read with the keyboard, hidden with Enter.
  await page.locator('#chart-latency-tradeoff').focus();
  await page.keyboard.press('End');
  const entry = (await page.locator('#chart-latency-tradeoff-value').textContent()).trim();
  assert.match(entry, /^legend: .*, shown/);
  await page.keyboard.press('Enter');
  await page.waitForFunction((k) => Number(document.querySelector('#chart-latency-tradeoff').dataset.marks) === k, shown - 1);
  await reloaded(page);
  await waitLoaded(page, n);
  await opened();
  await page.waitForFunction((k) => Number(document.querySelector('#chart-latency-tradeoff')?.dataset.marks) === k, shown - 1, { timeout: 30000 });
  // Control: Clear forgets it; the same set loaded again shows every series.
  await page.click('#clear');
  await page.click('#load-example');
  await waitLoaded(page, n);
  await opened();
  await page.waitForFunction((k) => Number(document.querySelector('#chart-latency-tradeoff')?.dataset.marks) === k, shown, { timeout: 30000 });
  assert.deepEqual(errors, []);
  await ctx.close();
});
