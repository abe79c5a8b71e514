// End to end: Compare mode on the built page. The example collection is loaded as "before";
// "after" is the same collection with every time stretched by 25 % (each `*_us` value of the run
// files, wall-clock stamps dropped), written to disk and dropped on the page as real files. The
// page's headline and every metric's label must equal `sloscope compare --format json` on the
// same two directories.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';
import { ARGS, newPage, dropFiles, waitLoaded, stretch, chartsDrew } from './lib.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const examples = path.join(root, 'static/examples');
const sloscope = path.resolve(process.env.SLOSCOPE_BIN || path.join(root, 'target/debug/sloscope'));

let server, browser, url;
before(async () => {
  server = await serve(path.join(root, 'dist'));
  url = `http://127.0.0.1:${server.address().port}/`;
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ARGS });
});
after(async () => { await browser?.close(); server?.close(); });

function files(dir) {
  const out = [];
  const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) { const p = path.join(d, e.name); if (e.isDirectory()) walk(p); else if (p.endsWith('.json')) out.push(p); } };
  walk(dir);
  return out.sort();
}

test('Compare mode: before and after collections dropped on the page read as sloscope compare', async () => {
  const slower = fs.mkdtempSync(path.join(os.tmpdir(), 'sloscope-compare-'));
  for (const f of files(examples)) {
    const doc = JSON.parse(fs.readFileSync(f, 'utf8'));
    const out = path.join(slower, path.relative(examples, f));
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, JSON.stringify(doc.kind === 'run' ? stretch(doc, 1.25) : doc));
  }
  const cli = spawnSync(sloscope, ['compare', examples, slower, '--format', 'json']);
  assert.equal(cli.status, 1, cli.stderr.toString());
  const expected = JSON.parse(cli.stdout.toString());
  const headline = cli.stderr.toString().trim().split('\n').pop().replace(/^sloscope: /, '');

  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, errors } = await newPage(ctx, url);
  await page.goto(url);
  await page.check('#compare-mode');
  await page.waitForSelector('#side-before:checked');
  await page.click('#load-example');
  const n = files(examples).length;
  await waitLoaded(page, n);
  // Two drop targets: the after collection dropped on its own, the toolbar's side untouched.
  assert.equal(await page.getAttribute('#drop-before', 'aria-pressed'), 'true');
  assert.equal((await page.textContent('#drop-before')).trim(), `before · ${n} file(s): drop here`);
  await dropFiles(page, files(slower).map((f) => ({ name: path.basename(f), text: fs.readFileSync(f, 'utf8') })), '#drop-after');
  await waitLoaded(page, 2 * n);
  assert.equal(await page.getAttribute('#drop-after', 'aria-pressed'), 'true');
  assert.ok(await page.isChecked('#side-after'), 'the toolbar follows the side dropped on');
  await page.waitForSelector('#compare[data-outcome="regression"]');
  assert.equal(await page.locator('#file-list li[data-side="before"]').count(), n);
  assert.equal(await page.locator('#file-list li[data-side="after"]').count(), n);
  assert.equal((await page.textContent('#compare-headline')).trim(), headline);
  // What is judged on each side, under the headline, as the CLI prints it (the stretched runs
  // lost their clock stamps: the collection dates differ, before → after).
  const judged = await page.locator('#compare-subject > div').evaluateAll((ds) => ds.map((d) => [d.querySelector('dt').textContent.trim(), d.querySelector('dd').textContent.trim()]));
  const text = spawnSync(sloscope, ['compare', examples, slower]).stdout.toString();
  assert.ok(judged.length >= 5, JSON.stringify(judged));
  for (const [label, value] of judged) assert.ok(text.includes(`${label}: ${value}`), `${label}: ${value}`);
  assert.ok(judged.some(([l, v]) => l === 'Artifact' && v.startsWith('smollm2-135m-instruct-q8_0')), JSON.stringify(judged));
  // Every metric's label, cell by cell, as the CLI gave it ("All metrics" holds every row).
  const all = page.locator('#compare details table.changes tbody tr');
  const rows = expected.cells.flatMap((c) => c.metrics.map((m) => [c.profile, c.candidate, m.metric, m.label.replace('_', '-')]));
  assert.equal(await all.count(), rows.length);
  for (const [i, [profile, candidate, metric, label]] of rows.entries()) {
    const row = all.nth(i);
    const cells = (await row.locator('td').allTextContents()).map((t) => t.trim());
    assert.deepEqual([cells[0], cells[1], cells[2]], [profile, candidate, metric]);
    // The smallest change the interval could detect, as the CLI's table shows it.
    assert.equal(cells.length, 10, cells.join(' | '));
    assert.equal(await row.getAttribute('data-label'), label, `${profile} ${candidate} ${metric}`);
    // Every number with its unit.
    if (metric.endsWith('_ms')) {
      for (const v of [cells[3], cells[4]]) assert.ok(v === '—' || v.endsWith(' ms'), `${metric}: ${v}`);
      assert.ok(cells[5] === '—' || / ms( \(|$)/.test(cells[5]), `${metric} change: ${cells[5]}`);
    }
  }
  // The whole distributions' shifts, which back the percentile rows an interval alone cannot
  // decide, as the CLI gives them (each with its label).
  const shifts = expected.cells.flatMap((c) => (c.shifts || []).map((x) => [c.profile, c.candidate, x.label.replace('_', '-')]));
  assert.ok(shifts.length > 0, 'a slower collection moves whole distributions');
  const shiftRows = page.locator('#compare-shifts tbody tr');
  assert.equal(await shiftRows.count(), shifts.length);
  for (const [i, [profile, candidate]] of shifts.entries()) {
    const cells = (await shiftRows.nth(i).locator('td').allTextContents()).map((t) => t.trim());
    assert.deepEqual([cells[0], cells[1]], [profile, candidate]);
    assert.ok(cells[3].endsWith(' ms'), `shift with its unit: ${cells[3]}`);
  }
  // On a phone every figure of a change is on screen, labelled by its column (the table's
  // columns past the metric's name once scrolled out of sight).
  await page.setViewportSize({ width: 390, height: 844 });
  const first = page.locator('#compare table.changes tbody tr').first();
  await first.scrollIntoViewIfNeeded();
  for (const [k, name] of [[4, 'before'], [5, 'after'], [6, 'change'], [7, '95% interval'], [10, 'label']]) {
    const td = first.locator(`td:nth-child(${k})`);
    const box = await td.boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `${name} on a phone: ${JSON.stringify(box)}`);
    if (k < 10) assert.equal(await td.evaluate((e) => getComputedStyle(e, '::before').content), `"${name} "`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  // Overlaid charts: per profile the trade-off before → after, per cell TTFT and TPOT CDFs.
  const profiles = new Set(expected.cells.map((c) => c.profile)).size;
  const drew = await chartsDrew(page);
  assert.equal(drew, profiles + 2 * expected.cells.length, 'every compare chart drew, with ink');
  // Copy summary copies the comparison's Markdown.
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.click('#copy-summary');
  await page.waitForSelector('#share-status');
  const md = await page.evaluate(() => navigator.clipboard.readText());
  assert.ok(md.startsWith('## sloscope compare: regression'), md.slice(0, 80));
  // Download report carries the comparison: opened offline from disk, the same headline, rows
  // and charts, each side's files listed, nothing fetched.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-report')]);
  const saved = path.join(os.tmpdir(), `sloscope-comparison-${process.pid}.html`);
  await download.saveAs(saved);
  assert.equal(download.suggestedFilename(), 'sloscope-comparison.html');
  assert.deepEqual(errors, []);
  const offline = await browser.newContext({ viewport: { width: 1280, height: 900 }, offline: true });
  const { page: rp, errors: rerrors } = await newPage(offline, url);
  const requests = [];
  rp.on('request', (r) => { if (!/^(file|data|blob):/.test(r.url())) requests.push(r.url()); });
  await rp.goto(`file://${saved}`);
  await rp.waitForSelector('#compare[data-outcome="regression"]');
  assert.equal((await rp.textContent('#compare-headline')).trim(), headline);
  assert.equal(await rp.locator('#compare details table.changes tbody tr').count(), rows.length);
  assert.equal(await rp.locator('#file-list li[data-side="before"]').count(), n);
  assert.equal(await rp.locator('#file-list li[data-side="after"]').count(), n);
  assert.equal(await chartsDrew(rp), drew);
  assert.match(await rp.locator('#report-data').textContent(), new RegExp(`carries the comparison .* these ${2 * n} files \\(${n} before, ${n} after\\)`));
  assert.equal(await rp.locator('#drop-after').count(), 0, 'a saved report takes no files');
  assert.deepEqual(requests, []);
  assert.deepEqual(rerrors.filter((e) => !e.startsWith('external request file:')), []);
  await offline.close();
  assert.deepEqual(errors, []);
  await ctx.close();
  fs.rmSync(slower, { recursive: true, force: true });
});

test('Compare switched on with files loaded: they become the before collection, nothing is lost', async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, errors } = await newPage(ctx, url);
  await page.goto(url);
  await page.click('#load-example');
  const n = files(examples).length;
  await waitLoaded(page, n);
  await page.check('#compare-mode');
  await page.waitForFunction((n) => document.querySelectorAll('#file-list li[data-side="before"]').length === n, n);
  assert.equal(await page.locator('#file-list li').count(), n);
  assert.equal((await page.textContent('#drop-before')).trim(), `before · ${n} file(s): drop here`);
  // The after collection: the comparison comes once both sides hold files.
  await page.click('#drop-after');
  await page.click('#load-example');
  await waitLoaded(page, 2 * n);
  await page.waitForSelector('#compare[data-outcome]');
  assert.equal(await page.locator('#file-list li[data-side="before"]').count(), n);
  assert.equal(await page.locator('#file-list li[data-side="after"]').count(), n);
  assert.equal(await page.locator('#file-list li.bad').count(), 0);
  // Off again: one analysis cannot hold two collections, so the files are forgotten.
  await page.uncheck('#compare-mode');
  await page.waitForFunction(() => document.querySelectorAll('#file-list li').length === 0);
  assert.deepEqual(errors, []);
  await ctx.close();
});
