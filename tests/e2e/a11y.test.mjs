// Accessibility, checked by an engine rather than by eye: axe-core (npm, run inside the page)
// on the example set as a reviewer opens it — every folded panel opened, every column shown —
// in light and in dark mode, and on the downloaded report opened offline. No contrast, name or
// label violation (WCAG 2 A and AA rules) may remain. (The engine is injected past the page's
// content security policy, which allows no script but the page's own.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';
import { servedPage, newPage, waitLoaded, dropFiles } from './lib.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const axe = path.join(root, 'node_modules/axe-core/axe.min.js');
const examples = path.join(root, 'static/examples');

const it = servedPage(root, { before, after }, serve, chromium);

function exampleCount() {
  let n = 0;
  const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) { const p = path.join(d, e.name); if (e.isDirectory()) walk(p); else if (p.endsWith('.json')) n++; } };
  walk(examples);
  return n;
}

/// Every panel open and every column shown, so the engine sees what a reviewer can reach.
async function openEverything(page) {
  await page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; }));
  const folded = page.locator('button.more-columns[aria-expanded="false"]');
  for (let i = 0; i < 10 && (await folded.count()) > 0; i++) await folded.first().click();
}

/// axe-core's WCAG 2 A/AA violations on the page, as `rule: target (summary)` lines.
async function violations(page) {
  await page.addScriptTag({ path: axe });
  const found = await page.evaluate(async () => {
    const r = await window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa'] }, resultTypes: ['violations'] });
    return r.violations.flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(' ')} (${n.failureSummary.split('\n').slice(0, 2).join(' ')})`));
  });
  return found;
}

for (const scheme of ['light', 'dark']) {
  test(`the example set has no accessibility violations in ${scheme} mode`, async () => {
    const ctx = await it.browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: scheme, bypassCSP: true });
    const { page, errors } = await newPage(ctx, it.url);
    await page.goto(it.url);
    await page.click('#load-example');
    await waitLoaded(page, exampleCount());
    await openEverything(page);
    const v = await violations(page);
    assert.deepEqual(v, [], v.join('\n'));
    assert.deepEqual(errors, []);
    await ctx.close();
  });
}

for (const scheme of ['light', 'dark']) {
  test(`compare mode (its two drop targets and the comparison) has no accessibility violations in ${scheme} mode`, async () => {
    const ctx = await it.browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: scheme, bypassCSP: true });
    const { page, errors } = await newPage(ctx, it.url);
    await page.goto(it.url);
    await page.check('#compare-mode');
    await page.click('#load-example');
    const n = exampleCount();
    await waitLoaded(page, n);
    // The same collection after: the comparison of a set with itself.
    await page.click('#drop-after');
    await page.click('#load-example');
    await waitLoaded(page, 2 * n);
    await page.waitForSelector('#compare[data-outcome]');
    await openEverything(page);
    const v = await violations(page);
    assert.deepEqual(v, [], v.join('\n'));
    assert.deepEqual(errors, []);
    await ctx.close();
  });
}

for (const [scheme, width] of [['light', 1280], ['dark', 390]]) {
  test(`other tools' files placed in the plan, and a chart value shown, have no accessibility violations (${scheme}, ${width} px)`, async () => {
    const ctx = await it.browser.newContext({ viewport: { width, height: 900 }, colorScheme: scheme, bypassCSP: true });
    const { page, errors } = await newPage(ctx, it.url);
    await page.goto(it.url);
    await page.waitForSelector('#load-example');
    const ex = path.join(root, 'static/examples');
    const files = [];
    const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) { const p = path.join(d, e.name); if (e.isDirectory()) walk(p); else if (p.endsWith('.json')) files.push({ name: path.relative(ex, p), text: fs.readFileSync(p, 'utf8') }); } };
    walk(ex);
    files.push({ name: 'save-result.json', text: fs.readFileSync(path.join(root, 'tests/fixtures/peers/vllm/save-result.json'), 'utf8') });
    await dropFiles(page, files);
    await waitLoaded(page, files.length);
    await page.selectOption('#placing-table select[id$="-profile"]', 'latency');
    await page.selectOption('#placing-table select[id$="-candidate"]', 'np4');
    await page.waitForFunction(() => document.querySelector('#placing-table td.placed')?.textContent.startsWith('placed'));
    await page.locator('#chart-latency-slo').focus();
    await page.keyboard.press('Home');
    const v = await violations(page);
    assert.deepEqual(v, [], v.join('\n'));
    assert.deepEqual(errors, []);
    await ctx.close();
  });
}

for (const [scheme, width] of [['light', 1280], ['dark', 390]]) {
  test(`SLOs stated in the page for other tools' files, and its error, have no accessibility violations (${scheme}, ${width} px)`, async () => {
    const ctx = await it.browser.newContext({ viewport: { width, height: 900 }, colorScheme: scheme, bypassCSP: true });
    const { page, errors } = await newPage(ctx, it.url);
    await page.goto(it.url);
    await page.waitForSelector('#load-example');
    const files = ['save-detailed.json', 'save-result.json'].map((n) => ({ name: n, text: fs.readFileSync(path.join(root, 'tests/fixtures/peers/vllm', n), 'utf8') }));
    await dropFiles(page, files);
    await waitLoaded(page, files.length);
    await page.waitForSelector('#state-files');
    // A statement that makes no plan: its error is shown beside the form.
    await page.fill('#state-files input[id$="-candidate"] >> nth=0', 'a b');
    await page.click('#state-judge');
    await page.waitForSelector('#state-error');
    const v = await violations(page);
    assert.deepEqual(v, [], v.join('\n'));
    assert.deepEqual(errors, []);
    await ctx.close();
  });
}

test('the downloaded report has no accessibility violations', async () => {
  const ctx = await it.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page } = await newPage(ctx, it.url);
  await page.goto(it.url);
  await page.click('#load-example');
  await waitLoaded(page, exampleCount());
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-report')]);
  const saved = path.join(os.tmpdir(), `sloscope-a11y-report-${process.pid}.html`);
  await download.saveAs(saved);
  const offline = await it.browser.newContext({ viewport: { width: 1280, height: 900 }, offline: true, bypassCSP: true });
  const { page: rp } = await newPage(offline);
  await rp.goto(`file://${saved}`);
  await waitLoaded(rp, exampleCount());
  await openEverything(rp);
  const v = await violations(rp);
  assert.deepEqual(v, [], v.join('\n'));
  fs.rmSync(saved, { force: true });
  await ctx.close();
  await offline.close();
});
