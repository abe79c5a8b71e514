// End to end: the built page (dist/) in Debian's Chromium, driven by playwright-core.
// Real files are dropped on the page; verdicts and table values must equal
// `sloscope analyze --format json` on the same files; every chart must draw; a broken file shows
// its error while the rest load; the downloaded report opens offline and shows the same.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const dist = path.join(root, 'dist');
const examples = path.join(root, 'static/examples');
const shots = path.join(root, 'target/e2e-screenshots');
const sloscope = path.resolve(process.env.SLOSCOPE_BIN || path.join(root, 'target/debug/sloscope'));
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-default-apps', '--disable-extensions'];

let server, browser, url;
before(async () => {
  fs.mkdirSync(shots, { recursive: true });
  server = await serve(dist);
  url = `http://127.0.0.1:${server.address().port}/`;
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ARGS });
});
after(async () => { await browser?.close(); server?.close(); });

function exampleFiles() {
  const out = [];
  const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) { const p = path.join(d, e.name); if (e.isDirectory()) walk(p); else if (p.endsWith('.json')) out.push(p); } };
  walk(examples);
  return out.sort();
}

const analyze = () => JSON.parse(execFileSync(sloscope, ['analyze', examples, '--format', 'json']).toString());

async function newPage(ctx) {
  const page = await ctx.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('request', (r) => { if (!r.url().startsWith(url) && !r.url().startsWith('data:') && !r.url().startsWith('blob:') && !r.url().startsWith('file:')) errors.push(`external request ${r.url()}`); });
  return { page, errors };
}

// The page lays out the core's view-model; `sloscope analyze --format json` prints the same
// view beside the numbers. Every verdict, line and table cell must read the same, word for word.
async function checkAgainstCli(page, expected) {
  const text = async (loc) => (await loc.textContent()).trim();
  const reportCaveats = (await page.locator('#report-caveats li').allTextContents()).map((c) => c.trim());
  assert.deepEqual(reportCaveats, expected.view.caveats.map((c) => `! ${c}`), 'report-wide caveats');
  for (const [i, p] of expected.profiles.entries()) {
    const v = expected.view.profiles[i];
    assert.equal(v.profile, p.profile);
    const card = page.locator(`.verdict[data-profile="${p.profile}"]`);
    assert.equal(await card.locator('.decision').getAttribute('data-decision'), p.summaries_only ? 'none' : p.decision, `${p.profile} decision`);
    assert.equal(await text(card.locator('.recommended')), p.recommended_name ?? 'none', `${p.profile} recommended`);
    assert.equal(await text(card.locator('.reason')), v.reason, `${p.profile} reason`);
    // The answer first: the overview card carries the view's headline and caveats.
    const top = page.locator(`.overview .card[data-profile="${p.profile}"]`);
    assert.equal(await text(top.locator('.headline')), v.headline, `${p.profile} headline`);
    const caveats = (await top.locator('.caveats li').allTextContents()).map((c) => c.trim());
    assert.deepEqual(caveats, v.caveats.map((c) => `! ${c}`), `${p.profile} caveats`);
    const section = page.locator(`#profile-${p.profile}`);
    assert.equal(await text(section.locator('p.workload')), v.workload_line, `${p.profile} workload line`);
    assert.equal(await text(section.locator('p.slo')), v.slo_line, `${p.profile} SLO line`);
    // Flags (artefacts, shortfalls, cheaper equivalents, next steps) read as in the CLI.
    const warns = (await section.locator('p.warn').allTextContents()).map((w) => w.trim());
    assert.deepEqual(warns, v.warnings.map((w) => `! ${w}`), `${p.profile} flags`);
    const excluded = (await section.locator('ul.excluded li').allTextContents()).map((e) => e.trim());
    assert.deepEqual(excluded, v.excluded, `${p.profile} exclusions`);
    const notes = (await section.locator('ul.run-notes li').allTextContents()).map((e) => e.trim());
    assert.deepEqual(notes, v.notes ?? [], `${p.profile} run notes`);
    // The capacity search: its heading, table and lines as the CLI prints them.
    if (v.capacity) {
      assert.equal(await text(section.locator('section.capacity h3')), v.capacity_title, `${p.profile} capacity title`);
      const lines = (await section.locator('ul.capacity-lines li').allTextContents()).map((l) => l.trim());
      assert.deepEqual(lines, v.capacity_lines, `${p.profile} capacity lines`);
    }
    for (const [tableId, table] of [[`#table-${p.profile}`, v.candidates], [`#baseline-${p.profile}`, v.baseline], [`#capacity-${p.profile}`, v.capacity]]) {
      if (!table) continue;
      const heads = await page.locator(`${tableId} thead th`).allTextContents();
      assert.deepEqual(heads.map((h) => h.trim()), table.columns.map((c) => c.title), `${tableId} headings`);
      for (const row of table.rows) {
        const cells = await page.locator(`${tableId} tbody tr[data-candidate="${row.key}"]`).locator('th, td').allTextContents();
        assert.deepEqual(cells.map((c) => c.trim()), row.cells.map((c) => c.text), `${tableId} ${row.key}`);
      }
    }
  }
}

async function chartsDrew(page) {
  const ids = await page.$$eval('canvas', (cs) => cs.map((c) => c.id));
  assert.ok(ids.length >= 4, `charts: ${ids}`);
  for (const id of ids) {
    await page.waitForSelector(`#${id}[data-drawn="true"]`, { timeout: 20000 });
    const inked = await page.$eval(`#${id}`, (c) => {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0; for (let i = 0; i < d.length; i += 4) if (d[i] < 200 || d[i + 1] < 200 || d[i + 2] < 200) n++;
      return n;
    });
    assert.ok(inked > 500, `${id} drew only ${inked} pixels`);
  }
  return ids.length;
}

// Drops real File objects on the window, as a user's drag and drop does.
async function dropFiles(page, files) {
  await page.evaluate((files) => {
    const dt = new DataTransfer();
    for (const f of files) dt.items.add(new File([f.text], f.name, { type: 'application/json' }));
    for (const type of ['dragenter', 'dragover', 'drop']) window.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, files);
}

async function waitLoaded(page, n) {
  await page.waitForFunction((n) => document.querySelectorAll('#file-list li.ok, #file-list li.bad').length >= n && !document.querySelector('#file-list li.loading'), n, { timeout: 60000 });
}

test('Load example (keyboard only) shows the same verdicts and numbers as sloscope analyze, and every chart draws', async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const { page, errors } = await newPage(ctx);
  await page.goto(url);
  await page.waitForSelector('#load-example');
  for (let i = 0; i < 10 && (await page.evaluate(() => document.activeElement?.id)) !== 'load-example'; i++) await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'load-example');
  await page.keyboard.press('Enter');
  await waitLoaded(page, exampleFiles().length);
  assert.equal(await page.locator('#file-list li.bad').count(), 0);
  await checkAgainstCli(page, analyze());
  const n = await chartsDrew(page);
  assert.ok(n >= 15, `expected the overview, 4 charts per profile and the balanced profile's 2 capacity charts, got ${n}`);
  await page.screenshot({ path: path.join(shots, 'example-1280.png'), fullPage: true });
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.click('#copy-summary');
  await page.waitForSelector('#share-status');
  const md = await page.evaluate(() => navigator.clipboard.readText());
  assert.ok(md.startsWith('## sloscope verdict'), md.slice(0, 80));
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('dropped files: a broken one shows its error, the others still load; the downloaded report opens offline', async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  const { page, errors } = await newPage(ctx);
  await page.goto(url);
  await page.waitForSelector('#load-example');
  const files = exampleFiles().map((p) => ({ name: path.basename(p), text: fs.readFileSync(p, 'utf8') }));
  files.push({ name: 'broken-run.json', text: '{"kind": "run", "schema_version": "1.0", "repeats": [' });
  files.push({ name: 'future.json', text: '{"kind": "run", "schema_version": "2.0"}' });
  await dropFiles(page, files);
  await waitLoaded(page, files.length);
  const bad = await page.locator('#file-list li.bad').allTextContents();
  assert.equal(bad.length, 2, bad.join('\n'));
  assert.ok(bad.some((t) => t.includes('broken-run.json: $.repeats: truncated JSON')), bad.join('\n'));
  assert.ok(bad.some((t) => t.includes('schema version 2.0 is newer than this sloscope reads')), bad.join('\n'));
  const expected = analyze();
  await checkAgainstCli(page, expected);
  await chartsDrew(page);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-report')]);
  const saved = path.join(os.tmpdir(), `sloscope-report-${process.pid}.html`);
  await download.saveAs(saved);
  assert.deepEqual(errors, []);

  const offline = await browser.newContext({ viewport: { width: 1280, height: 800 }, offline: true });
  const { page: rp, errors: rerrors } = await newPage(offline);
  const requests = [];
  rp.on('request', (r) => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) requests.push(r.url()); });
  await rp.goto(`file://${saved}`);
  await waitLoaded(rp, files.length - 2);
  await checkAgainstCli(rp, expected);
  await chartsDrew(rp);
  await rp.screenshot({ path: path.join(shots, 'report-offline.png'), fullPage: true });
  assert.deepEqual(requests, [], 'the report makes no network request');
  assert.deepEqual(rerrors.filter((e) => !e.startsWith('external request file:')), []);
  await offline.close();
  await ctx.close();
});

test('other tools\' files dropped as they are: the same summaries as sloscope analyze, no verdict without a plan', async () => {
  const peers = path.join(root, 'tests/fixtures/peers');
  const picked = ['sglang/python-output-details.jsonl', 'guidellm/benchmarks.json', 'aiperf/profile_export_aiperf.csv', 'llmperf/smollm2-q4_64_32_individual_responses.json'];
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sloscope-peers-'));
  const files = picked.map((rel) => {
    const name = path.basename(rel);
    fs.copyFileSync(path.join(peers, rel), path.join(tmp, name));
    return { name, text: fs.readFileSync(path.join(peers, rel), 'utf8') };
  });
  const expected = JSON.parse(execFileSync(sloscope, ['analyze', '--format', 'json', ...files.map((f) => f.name)], { cwd: tmp }).toString());
  assert.ok(expected.profiles.length >= 2 && expected.profiles.every((p) => p.summaries_only), 'summaries only');
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const { page, errors } = await newPage(ctx);
  await page.goto(url);
  await page.waitForSelector('#load-example');
  await dropFiles(page, files);
  await waitLoaded(page, files.length);
  assert.equal(await page.locator('#file-list li.bad').count(), 0, (await page.locator('#file-list li.bad').allTextContents()).join('\n'));
  const list = (await page.locator('#file-list li.ok').allTextContents()).join('\n');
  assert.ok(list.includes('GuideLLM result (2 runs)'), list);
  await checkAgainstCli(page, expected);
  assert.ok((await page.locator('.verdict .decision').allTextContents()).every((t) => t.trim() === 'NO VERDICT'));
  await page.screenshot({ path: path.join(shots, 'peers-1280.png'), fullPage: true });
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('reruns: a conflict until "Pool reruns" is checked, then the same pooled verdict as analyze --pool-reruns, kept in the downloaded report', async () => {
  // A rerun of np1 in the latency profile: another run of the same candidate and workload.
  const flat = fs.mkdtempSync(path.join(os.tmpdir(), 'sloscope-rerun-'));
  const files = exampleFiles().map((p) => ({ name: path.basename(p), text: fs.readFileSync(p, 'utf8') }));
  const run = JSON.parse(files.find((f) => f.name === 'latency--np1.json').text);
  run.started_at = '2026-11-30T23:00:00Z';
  files.push({ name: 'latency--np1.rerun.json', text: JSON.stringify(run) });
  for (const f of files) fs.writeFileSync(path.join(flat, f.name), f.text);
  const cli = (...extra) => JSON.parse(execFileSync(sloscope, ['analyze', ...files.map((f) => f.name), '--format', 'json', ...extra], { cwd: flat }).toString());
  const separate = cli();
  const pooled = cli('--pool-reruns');
  assert.ok(separate.profiles[0].excluded.some((e) => e.code === 'conflicting_runs'));
  assert.ok(pooled.profiles[0].flags.some((f) => f.code === 'pooled_runs'));

  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  const { page, errors } = await newPage(ctx);
  await page.goto(url);
  await page.waitForSelector('#load-example');
  await dropFiles(page, files);
  await waitLoaded(page, files.length);
  await checkAgainstCli(page, separate);
  assert.equal(await page.locator('#pool-reruns').isChecked(), false);
  await page.check('#pool-reruns');
  await checkAgainstCli(page, pooled);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-report')]);
  const saved = path.join(os.tmpdir(), `sloscope-pooled-${process.pid}.html`);
  await download.saveAs(saved);
  const offline = await browser.newContext({ viewport: { width: 1280, height: 800 }, offline: true });
  const { page: rp } = await newPage(offline);
  await rp.goto(`file://${saved}`);
  await waitLoaded(rp, files.length);
  await checkAgainstCli(rp, pooled);
  assert.equal(await rp.locator('#pool-reruns').isChecked(), true);
  assert.deepEqual(errors, []);
  await offline.close();
  await ctx.close();
});

// Every profile's verdict line must be on the first screen, on a laptop and on a phone; the
// files and the lineage shrink to one status line each when all is well; lineage notes show.
for (const [width, height] of [[1280, 900], [390, 844]]) {
  test(`verdict first at ${width}×${height}`, async () => {
    const ctx = await browser.newContext({ viewport: { width, height } });
    const { page, errors } = await newPage(ctx);
    await page.goto(url);
    await page.click('#load-example');
    await waitLoaded(page, exampleFiles().length);
    const expected = analyze();
    for (const p of expected.view.profiles) {
      const box = await page.locator(`.overview .card[data-profile="${p.profile}"] .headline`).boundingBox();
      assert.ok(box && box.y + box.height <= height, `${p.profile} headline ends at ${box && box.y + box.height} px, below the first ${height} px`);
    }
    assert.equal((await page.locator('#files-status').textContent()).trim(), `Files: ${exampleFiles().length} loaded ✓`);
    assert.equal(await page.locator('section.files details').getAttribute('open'), null, 'the file list is folded when every file loaded');
    const notes = (await page.locator('#lineage-notes li').allTextContents()).map((n) => n.trim());
    assert.deepEqual(notes, expected.view.lineage.notes.map((n) => `note: ${n}`));
    assert.ok(notes.some((n) => n.includes('asserted')), notes.join('\n'));
    await page.screenshot({ path: path.join(shots, `first-screen-${width}.png`) });
    if (width >= 1280) {
      // The decisive columns fit without sideways scrolling; the rest wait behind "More columns".
      for (const p of expected.view.profiles) {
        const fits = await page.locator(`#table-${p.profile}`).evaluate((t) => t.parentElement.scrollWidth <= t.parentElement.clientWidth + 1);
        assert.ok(fits, `${p.profile}: the decisive columns are clipped`);
        const shown = await page.locator(`#table-${p.profile} thead th`).evaluateAll((ths) => ths.filter((th) => getComputedStyle(th).display !== 'none').map((th) => th.textContent.trim()));
        assert.deepEqual(shown, p.candidates.columns.filter((c) => c.decisive).map((c) => c.title));
      }
      await page.click('#more-columns-latency');
      const all = await page.locator('#table-latency thead th').evaluateAll((ths) => ths.filter((th) => getComputedStyle(th).display !== 'none').length);
      assert.equal(all, expected.view.profiles[0].candidates.columns.length);
    }
    assert.deepEqual(errors, []);
    await ctx.close();
  });
}

test('phone width: readable, no sideways scrolling of the page', async () => {
  const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
  const { page, errors } = await newPage(ctx);
  await page.goto(url);
  await page.click('#load-example');
  await waitLoaded(page, exampleFiles().length);
  await chartsDrew(page);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `page is ${overflow}px wider than the screen`);
  await page.screenshot({ path: path.join(shots, 'example-phone.png'), fullPage: false });
  assert.deepEqual(errors, []);
  await ctx.close();
});
