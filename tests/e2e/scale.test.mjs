// End to end, at scale: a large run file generated at test time (not committed; `xtask gen-run`,
// every inter-token gap kept) is given to the page through its file input, as a user's Browse
// does. It is read in chunks by the reader worker, with a progress bar and a Cancel button; the
// page keeps taking input while it reads; a broken file beside it is refused on its own; the
// verdict equals `sloscope analyze` on the same file; the downloaded report stays small.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';
import { ARGS, newPage as openPage, checkAgainstCli, waitLoaded } from './lib.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const sloscope = path.resolve(process.env.SLOSCOPE_BIN || path.join(root, 'target/debug/sloscope'));
const xtask = path.resolve(process.env.SLOSCOPE_XTASK || path.join(root, 'target/debug/xtask'));
// 200,000 requests of 64 output tokens: about 85 MB, progress reported every 8 MB read.
const REQUESTS = Number(process.env.SLOSCOPE_E2E_REQUESTS || 200000);

let server, browser, url, dir, big;
before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sloscope-scale-'));
  big = path.join(dir, `run-${REQUESTS}x64.json`);
  execFileSync(xtask, ['gen-run', String(REQUESTS), '64', big]);
  server = await serve(path.join(root, 'dist'));
  url = `http://127.0.0.1:${server.address().port}/`;
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ARGS });
});
after(async () => {
  await browser?.close();
  server?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});
const newPage = (ctx) => openPage(ctx, url);

// Long main-thread tasks (the Long Tasks API), recorded from the first paint on.
async function watchLongTasks(page) {
  await page.addInitScript(() => {
    window.__longTasks = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__longTasks.push([e.startTime, e.duration]); })
      .observe({ type: 'longtask', buffered: true });
  });
}

test('a large run file is read in the background beside a broken one: progress, the same verdict as sloscope analyze, a small report', async (t) => {
  const broken = path.join(dir, 'broken-run.json');
  fs.writeFileSync(broken, '{"kind": "run", "schema_version": "1.0", "repeats": [');
  const expected = JSON.parse(execFileSync(sloscope, ['analyze', big, '--format', 'json'], { cwd: dir }).toString());
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  const { page, errors } = await newPage(ctx);
  await watchLongTasks(page);
  await page.goto(url);
  await page.waitForSelector('#file-input', { state: 'attached' });
  // Every progress line the page shows while the file loads, recorded as the page changes: a
  // state that lasts less than one of the test's polls (a fast read) is still seen.
  await page.evaluate(() => {
    window.__progress = [];
    new MutationObserver(() => {
      const bar = document.querySelector('#file-list li.loading progress');
      const detail = document.querySelector('#file-list li.loading .detail');
      if (bar && detail) window.__progress.push(detail.textContent);
    }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  });
  const chosenAt = await page.evaluate(() => performance.now());
  await page.setInputFiles('#file-input', [big, broken]);
  try {
    await waitLoaded(page, 2);
  } catch (e) {
    const list = await page.locator('#file-list').textContent().catch(() => '(no file list)');
    throw new Error(`${e.message}\nthe file list then: ${list}`);
  }
  // The reader reported its progress while it read, and the page showed it.
  const shown = await page.evaluate(() => window.__progress);
  assert.ok(
    shown.some((d) => /read [\d.]+ MB of [\d.]+ MB · \d+ requests parsed/.test(d)),
    `progress lines seen: ${shown.slice(0, 5).join(' | ') || 'none'}`,
  );
  const bad = await page.locator('#file-list li.bad').allTextContents();
  assert.equal(bad.length, 1, bad.join('\n'));
  assert.ok(bad[0].includes('broken-run.json: $.repeats: truncated JSON'), bad[0]);
  const ok = await page.locator('#file-list li.ok').allTextContents();
  assert.equal(ok.length, 1, ok.join('\n'));
  await checkAgainstCli(page, expected);
  const tasks = await page.evaluate(() => window.__longTasks);
  const longest = Math.max(0, ...tasks.filter(([start]) => start >= chosenAt).map(([, d]) => d));
  const atStart = Math.max(0, ...tasks.filter(([start]) => start < chosenAt).map(([, d]) => d));
  t.diagnostic(`longest main-thread task while reading ${REQUESTS} requests: ${longest.toFixed(0)} ms (before the files were chosen, page start: ${atStart.toFixed(0)} ms)`);

  // The report carries the analysis and the chart curves, not the 85 MB of requests.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-report')]);
  const saved = path.join(dir, 'report.html');
  await download.saveAs(saved);
  const size = fs.statSync(saved).size;
  const wasm = fs.readdirSync(path.join(root, 'dist')).filter((f) => f.startsWith('sloscope-web') && f.endsWith('.wasm'))
    .reduce((s, f) => s + fs.statSync(path.join(root, 'dist', f)).size, 0);
  assert.ok(size < wasm * 1.4 + 2e6, `report is ${size} bytes beside a ${wasm}-byte app`);
  const rctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, offline: true });
  const { page: rp, errors: rerrors } = await newPage(rctx);
  await rp.goto(`file://${saved}`);
  await waitLoaded(rp, 1);
  await checkAgainstCli(rp, expected);
  assert.match(await rp.locator('#report-data').textContent(), /carries the analysis .* not their per-request data/);
  assert.deepEqual(rerrors.filter((e) => !e.startsWith('external request file:')), []);
  await rctx.close();
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('Cancel stops a large read half-way and the other files stay', async (t) => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, errors } = await newPage(ctx);
  await page.goto(url);
  await page.click('#load-example');
  await page.waitForSelector('main[data-ready="true"] .overview .card');
  const before = await page.locator('.overview .card').count();
  // Cancel is pressed the moment the first progress line shows, from the page itself: the read
  // takes well under a second on a quick host, shorter than a click sent from the test can be
  // sure to land in. (That the page takes input while it reads is the first test's long-task
  // measure.) The line shown at the press is kept, to check the read was stopped half-way.
  await page.evaluate(() => {
    window.__pressedAt = null;
    const seen = new MutationObserver(() => {
      const detail = document.querySelector('#file-list li.loading progress ~ button.cancel')
        && document.querySelector('#file-list li.loading .detail');
      if (!detail) return;
      window.__pressedAt = detail.textContent;
      seen.disconnect();
      document.querySelector('#file-list li.loading button.cancel').click();
    });
    seen.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  });
  await page.setInputFiles('#file-input', big);
  await page.waitForFunction(() => window.__pressedAt !== null, null, { timeout: 60000 });
  const [, read, total] = (await page.evaluate(() => window.__pressedAt)).match(/read ([\d.]+) MB of ([\d.]+) MB/) ?? [];
  const pressedAt = await page.evaluate(() => window.__pressedAt);
  t.diagnostic(`Cancel pressed at: ${pressedAt}`);
  assert.ok(Number(read) < Number(total), `Cancel pressed at: ${pressedAt}`);
  // The read ends, one way or another; a read that stalls or ends otherwise names what the
  // file list shows.
  const list = async () => (await page.locator('#file-list').innerText()).replace(/\s+/g, ' ');
  await page.waitForFunction(() => !document.querySelector('#file-list li.loading'), null, { timeout: 20000 })
    .catch(async (e) => assert.fail(`the read did not end after Cancel: ${await list()} (${e.message.split('\n')[0]})`));
  assert.equal(await page.locator('#file-list li.cancelled').count(), 1, `after Cancel: ${await list()}`);
  assert.match(await page.locator('#file-list li.cancelled .detail').textContent(), /cancelled: not analysed/);
  await page.waitForSelector('main[data-ready="true"]');
  // The example set's verdicts stand; the cancelled run was not added.
  assert.equal(await page.locator('.overview .card').count(), before);
  assert.match(await page.locator('#files-status').textContent(), /^Files: \d+ loaded, 1 cancelled ✓$/);
  assert.deepEqual(errors, []);
  await ctx.close();
});
