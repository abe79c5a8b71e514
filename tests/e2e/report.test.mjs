// End to end: the built page (dist/) in Debian's Chromium, driven by playwright-core.
// Real files are dropped on the page; verdicts and table values must equal
// `sloscope analyze --format json` on the same files; every chart must draw; a broken file shows
// its error while the rest load; the downloaded report opens offline and shows the same.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';
import { ARGS, newPage as openPage, checkAgainstCli, chartsDrew, dropFiles, waitLoaded, stretch } from './lib.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const dist = path.join(root, 'dist');
const examples = path.join(root, 'static/examples');
const shots = path.join(root, 'target/e2e-screenshots');
const sloscope = path.resolve(process.env.SLOSCOPE_BIN || path.join(root, 'target/debug/sloscope'));

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

const newPage = (ctx) => openPage(ctx, url);
const analyze = () => JSON.parse(execFileSync(sloscope, ['analyze', examples, '--format', 'json']).toString());

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
  // The example's latency profile is multi-turn: TTFT by turn is charted (and only there).
  assert.deepEqual(await page.locator('[id$="-turns"]').evaluateAll((els) => els.map((e) => e.id)), ['chart-latency-turns']);
  await page.locator('#more-charts-latency summary').click();
  await page.locator('#chart-latency-turns').screenshot({ path: path.join(shots, 'latency-turns.png') });
  await page.locator('#chart-latency-tradeoff').screenshot({ path: path.join(shots, 'latency-tradeoff.png') });
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
  // Named after what it holds: the artifact and the first day of collection.
  const day = expected.subject.collected_from.slice(0, 10);
  assert.match(download.suggestedFilename(), new RegExp(`^sloscope-.*${day}\\.html$`));
  assert.ok(download.suggestedFilename().includes(expected.subject.artifact.replace(/[^A-Za-z0-9._]+/g, '-')), download.suggestedFilename());
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
  assert.match(await rp.locator('#report-data').textContent(), new RegExp(`carries the analysis .* from these ${files.length - 2} files .* not their per-request data`));
  assert.deepEqual(requests, [], 'the report makes no network request');
  assert.equal((await rp.textContent('.privacy')).trim(), 'A saved report: its data is inside this file, and it fetches nothing.');
  assert.deepEqual(rerrors.filter((e) => !e.startsWith('external request file:')), []);

  // With the raw files, the report reads them again when opened: the same numbers, recomputed.
  await page.check('#report-raw');
  const [rawDownload] = await Promise.all([page.waitForEvent('download'), page.click('#download-report')]);
  const rawSaved = path.join(os.tmpdir(), `sloscope-report-raw-${process.pid}.html`);
  await rawDownload.saveAs(rawSaved);
  assert.ok(fs.statSync(rawSaved).size > fs.statSync(saved).size, 'the raw report carries more');
  const { page: rr, errors: rrerrors } = await newPage(offline);
  await rr.goto(`file://${rawSaved}`);
  await waitLoaded(rr, files.length - 2);
  await checkAgainstCli(rr, expected);
  assert.equal(await rr.locator('#report-data').count(), 0);
  assert.deepEqual(rrerrors.filter((e) => !e.startsWith('external request file:')), []);
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
  // No lineage record loaded is a state, not a failure: no red badge, no list of errors.
  assert.equal((await page.textContent('#lineage-status')).trim(), 'none loaded — summaries only');
  assert.equal(expected.view.lineage.absent, true);
  assert.equal(await page.locator('section.lineage ul.issues li').count(), 0);
  await page.screenshot({ path: path.join(shots, 'peers-1280.png'), fullPage: true });
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('the full reader (importers, Compare) is fetched only when needed: sloscope\'s own files are read by the lean one; another tool\'s file then starts the full one, which reads every file again', async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const { page, errors } = await newPage(ctx);
  const fetched = [];
  page.on('request', (r) => fetched.push(path.basename(new URL(r.url()).pathname)));
  const readers = () => page.workers().map((w) => path.basename(new URL(w.url()).pathname));
  await page.goto(url);
  await page.click('#load-example');
  await waitLoaded(page, exampleFiles().length);
  const alone = await page.locator('.verdict .decision').allTextContents();
  assert.deepEqual(readers(), ['sloscope-lean-worker_loader.js']);
  assert.ok(fetched.includes('sloscope-lean-worker_bg.wasm'), fetched.join(' '));
  assert.ok(!fetched.some((f) => f.startsWith('sloscope-worker')), fetched.join(' '));
  const peer = path.join(root, 'tests/fixtures/peers/guidellm/benchmarks.json');
  await dropFiles(page, [{ name: 'benchmarks.json', text: fs.readFileSync(peer, 'utf8') }]);
  await waitLoaded(page, exampleFiles().length + 1);
  for (let i = 0; i < 50 && readers().join() !== 'sloscope-worker_loader.js'; i++) await page.waitForTimeout(100);
  assert.deepEqual(readers(), ['sloscope-worker_loader.js']);
  assert.ok(fetched.includes('sloscope-worker_bg.wasm'), fetched.join(' '));
  assert.equal(await page.locator('#file-list li.bad').count(), 0, (await page.locator('#file-list li.bad').allTextContents()).join('\n'));
  assert.ok((await page.locator('#file-list li.ok').allTextContents()).join('\n').includes('GuideLLM result (2 runs)'));
  // the example's verdicts, now from the full reader, are what the lean one gave
  assert.deepEqual((await page.locator('.verdict .decision').allTextContents()).slice(0, alone.length), alone);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('chart values on hover and keyboard: each point says its figures in words beside it', async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const { page, errors } = await newPage(ctx);
  await page.goto(url);
  await page.click('#load-example');
  await waitLoaded(page, exampleFiles().length);
  const latency = analyze().profiles.find((p) => p.profile === 'latency');
  const names = latency.candidates.map((c) => c.name);
  await page.locator('#more-charts-latency summary').click();
  const chart = page.locator('#chart-latency-tradeoff');
  await page.waitForSelector('#chart-latency-tradeoff[data-drawn="true"]');
  // one value per candidate, and one legend entry per candidate that shows or hides it
  assert.equal(Number(await chart.getAttribute('data-marks')), 2 * names.length);
  const value = page.locator('#chart-latency-tradeoff-value');
  const ring = page.locator('figure:has(#chart-latency-tradeoff) .chart-ring');
  // keyboard: focus, then the arrows step through the points
  await chart.focus();
  await page.keyboard.press('ArrowRight');
  const first = (await value.textContent()).trim();
  assert.match(first, /^\S+: TTFT p95 [\d.,]+ ms, output throughput [\d.,]+ tokens\/s/);
  assert.ok(names.some((n) => first.startsWith(`${n}:`)), first);
  await page.keyboard.press('ArrowRight');
  const second = (await value.textContent()).trim();
  assert.notEqual(second, first);
  await page.keyboard.press('ArrowLeft');
  assert.equal((await value.textContent()).trim(), first);
  const at = await ring.boundingBox();
  assert.ok(at, 'a ring marks the point read');
  await page.keyboard.press('Escape');
  assert.equal((await value.textContent()).trim(), '');
  assert.equal(await ring.count(), 0);
  // the pointer on that point reads the same words; away from every point, nothing
  await page.mouse.move(at.x + at.width / 2, at.y + at.height / 2);
  await page.waitForFunction(() => document.querySelector('#chart-latency-tradeoff-value').textContent.trim() !== '');
  assert.equal((await value.textContent()).trim(), first);
  const box = await chart.boundingBox();
  await page.mouse.move(box.x + 3, box.y + 3);
  await page.waitForFunction(() => document.querySelector('#chart-latency-tradeoff-value').textContent.trim() === '');
  // the legend: the last entry read with the keyboard hides its candidate (Enter), and shows
  // it again; a click on the entry does the same
  await chart.focus();
  await page.keyboard.press('End');
  const entry = (await value.textContent()).trim();
  const hid = names.find((n) => entry.startsWith(`legend: ${n}, shown`));
  assert.ok(hid, entry);
  const entryAt = await ring.boundingBox();
  await page.keyboard.press('Enter');
  await page.waitForFunction((n) => document.querySelector('#chart-latency-tradeoff').dataset.marks === String(n), 2 * names.length - 1);
  assert.equal((await value.textContent()).trim(), `legend: ${hid}, hidden: click or Enter shows it`);
  await page.keyboard.press('Enter');
  await page.waitForFunction((n) => document.querySelector('#chart-latency-tradeoff').dataset.marks === String(n), 2 * names.length);
  await page.keyboard.press('Escape');
  await page.mouse.click(entryAt.x + entryAt.width / 2, entryAt.y + entryAt.height / 2);
  await page.waitForFunction((n) => document.querySelector('#chart-latency-tradeoff').dataset.marks === String(n), 2 * names.length - 1);
  await page.mouse.click(entryAt.x + entryAt.width / 2, entryAt.y + entryAt.height / 2);
  await page.waitForFunction((n) => document.querySelector('#chart-latency-tradeoff').dataset.marks === String(n), 2 * names.length);
  // the entry's words are part of it, and the pointer says it can be clicked
  await page.mouse.move(entryAt.x + entryAt.width / 2 + 28, entryAt.y + entryAt.height / 2);
  assert.equal(await chart.evaluate((c) => c.style.cursor), 'pointer');
  await page.mouse.click(entryAt.x + entryAt.width / 2 + 28, entryAt.y + entryAt.height / 2);
  await page.waitForFunction((n) => document.querySelector('#chart-latency-tradeoff').dataset.marks === String(n), 2 * names.length - 1);
  await page.mouse.click(entryAt.x + entryAt.width / 2 + 28, entryAt.y + entryAt.height / 2);
  await page.waitForFunction((n) => document.querySelector('#chart-latency-tradeoff').dataset.marks === String(n), 2 * names.length);
  // the SLO chart, first on the card: one value per row, with its interval where bounded
  const slo = page.locator('#chart-latency-slo');
  assert.ok(Number(await slo.getAttribute('data-marks')) >= names.length);
  await slo.focus();
  await page.keyboard.press('Home');
  assert.match((await page.locator('#chart-latency-slo-value').textContent()).trim(), /×/);
  // every drawn chart of the page says something at its points
  const silent = await page.$$eval('canvas[data-drawn="true"]', (cs) => cs.filter((c) => c.dataset.marks === '0').map((c) => c.id));
  assert.deepEqual(silent, []);
  assert.deepEqual(errors, []);
  await ctx.close();
  // On a phone a tap (no pointer moves first) shows the value tapped.
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
  const { page: pp, errors: perrors } = await newPage(phone);
  await pp.goto(url);
  await pp.click('#load-example');
  await waitLoaded(pp, exampleFiles().length);
  const slo2 = pp.locator('#chart-latency-slo');
  await pp.waitForSelector('#chart-latency-slo[data-drawn="true"]');
  await slo2.focus();
  await pp.keyboard.press('Home');
  const said = (await pp.locator('#chart-latency-slo-value').textContent()).trim();
  const at2 = await pp.locator('figure:has(#chart-latency-slo) .chart-ring').boundingBox();
  await pp.keyboard.press('Escape');
  await pp.touchscreen.tap(at2.x + at2.width / 2, at2.y + at2.height / 2);
  await pp.waitForFunction(() => document.querySelector('#chart-latency-slo-value').textContent.trim() !== '');
  assert.equal((await pp.locator('#chart-latency-slo-value').textContent()).trim(), said);
  assert.ok(await pp.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no sideways scroll with a value shown');
  assert.deepEqual(perrors, []);
  await phone.close();
});

test('another tool\'s file placed in the plan on the page gives the verdict sloscope import --plan then analyze gives', async () => {
  // The example set without its latency np4 run, and vLLM's result file in its place.
  const set = exampleFiles().filter((f) => !f.endsWith('runs/latency--np4.json'));
  const vllm = path.join(root, 'tests/fixtures/peers/vllm/save-result.json');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sloscope-place-'));
  const named = set.map((f) => ({ name: path.relative(examples, f), text: fs.readFileSync(f, 'utf8') }));
  for (const f of named) { fs.mkdirSync(path.dirname(path.join(tmp, f.name)), { recursive: true }); fs.writeFileSync(path.join(tmp, f.name), f.text); }
  // What the command line makes of it: import into the plan's latency np4, then analyze.
  const pl = path.join(tmp, '_plan');
  fs.mkdirSync(pl);
  fs.copyFileSync(path.join(root, 'examples/llama-cpu/plan.toml'), path.join(pl, 'plan.toml'));
  fs.cpSync(path.join(examples, 'lineage'), path.join(pl, 'lineage'), { recursive: true });
  const env = { ...process.env, LLAMA_SERVER: '/bin/true', SLOSCOPE_Q8_0_GGUF: '/nonexistent', SLOSCOPE_F16_GGUF: '/nonexistent' };
  execFileSync(sloscope, ['import', vllm, '--out', path.join(tmp, '_out'), '--plan', path.join(pl, 'plan.toml'), '--profile', 'latency', '--candidate', 'np4'], { env });
  fs.copyFileSync(path.join(tmp, '_out/runs/latency--np4.json'), path.join(tmp, 'save-result.json'));
  const names = [...named.map((f) => f.name), 'save-result.json'];
  const cli = spawnSync(sloscope, ['analyze', '--format', 'json', ...names], { cwd: tmp });
  const expected = JSON.parse(cli.stdout.toString());

  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, errors } = await newPage(ctx);
  await page.goto(url);
  await page.waitForSelector('#load-example');
  await dropFiles(page, [...named, { name: 'save-result.json', text: fs.readFileSync(vllm, 'utf8') }]);
  await waitLoaded(page, names.length);
  const row = page.locator('#placing-table tbody tr');
  assert.equal(await row.count(), 1);
  assert.equal((await row.locator('td').first().textContent()).trim(), 'save-result.json');
  assert.equal((await row.locator('td.placed').textContent()).trim(), 'summaries only');
  await row.locator('select[id$="-profile"]').selectOption('latency');
  await row.locator('select[id$="-candidate"]').selectOption('np4');
  await page.waitForFunction(() => document.querySelector('#placing-table td.placed')?.textContent.startsWith('placed: latency · np4'));
  await waitLoaded(page, names.length);
  await checkAgainstCli(page, expected);
  // Taken out again: summaries only, as read
  await row.locator('select[id$="-profile"]').selectOption('');
  await row.locator('select[id$="-candidate"]').selectOption('');
  await page.waitForFunction(() => document.querySelector('#placing-table td.placed')?.textContent.startsWith('summaries only'));
  assert.deepEqual(errors, []);
  await ctx.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

// A run file as the collector's journal would have left it (JSON Lines: the run's header,
// then per repeat its start and each request), the journal format's own field names.
function asJournal(run) {
  const header = { ...run, repeats: [] };
  const lines = [{ line: 'header', kind: 'run_journal', schema_version: run.schema_version, run: header }];
  for (const rep of run.repeats) {
    lines.push({ line: 'repeat', repeat: rep.index, warmup_requests: rep.warmup_requests });
    const q = rep.requests;
    for (let i = 0; i < q.send_offset_us.length; i++) {
      const row = { line: 'request', repeat: rep.index };
      for (const [k, col] of Object.entries(q)) if (Array.isArray(col)) row[k] = col[i];
      lines.push(row);
    }
  }
  return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

test('a collector journal dropped on the page is recovered as a partial run (by the full reader, fetched for it), as sloscope analyze recovers it', async () => {
  const set = exampleFiles().filter((f) => !f.endsWith('runs/throughput--np4.json'));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sloscope-journal-'));
  const named = set.map((f) => ({ name: path.relative(examples, f), text: fs.readFileSync(f, 'utf8') }));
  const run = JSON.parse(fs.readFileSync(path.join(examples, 'runs/throughput--np4.json'), 'utf8'));
  named.push({ name: 'runs/throughput--np4.journal.jsonl', text: asJournal(run) });
  for (const f of named) { fs.mkdirSync(path.dirname(path.join(tmp, f.name)), { recursive: true }); fs.writeFileSync(path.join(tmp, f.name), f.text); }
  const cli = spawnSync(sloscope, ['analyze', '--format', 'json', ...named.map((f) => f.name)], { cwd: tmp });
  const expected = JSON.parse(cli.stdout.toString());
  const throughput = expected.profiles.find((p) => p.profile === 'throughput');
  // Recovered as a partial run: read, and left out of the verdict as partial.
  assert.ok(throughput.excluded.some((e) => e.file.endsWith('throughput--np4.journal.jsonl') && e.reason.includes('recovered from the journal')), JSON.stringify(throughput.excluded));

  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, errors } = await newPage(ctx);
  await page.goto(url);
  await page.waitForSelector('#load-example');
  await dropFiles(page, named);
  await waitLoaded(page, named.length);
  assert.equal(await page.locator('#file-list li.bad').count(), 0, 'nothing refused');
  await checkAgainstCli(page, expected);
  assert.deepEqual(errors, []);
  await ctx.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('a file whose benchmarks all ran another workload says it is placed with nothing used, and changes no verdict', async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, errors } = await newPage(ctx);
  await page.goto(url);
  await page.click('#load-example');
  await waitLoaded(page, exampleFiles().length);
  const alone = await page.locator('.verdict .decision').allTextContents();
  const peer = path.join(root, 'tests/fixtures/peers/guidellm/benchmarks.json');
  await dropFiles(page, [{ name: 'benchmarks.json', text: fs.readFileSync(peer, 'utf8') }]);
  await waitLoaded(page, exampleFiles().length + 1);
  await page.selectOption('#placing-table select[id$="-profile"]', 'balanced');
  await page.selectOption('#placing-table select[id$="-candidate"]', 'np1');
  await page.waitForFunction(() => document.querySelector('#placing-table td.placed')?.textContent.startsWith('placed'));
  assert.match(await page.locator('#placing-table td.placed').textContent(), /^placed: balanced · np1 — nothing used: none of its 2 benchmarks ran the profile's workload/);
  await waitLoaded(page, exampleFiles().length + 1);
  assert.deepEqual(await page.locator('.verdict .decision').allTextContents(), alone);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('reruns: a conflict until "Pool reruns" is checked, then the same pooled verdict as analyze --pool-reruns, kept in the downloaded report', async () => {
  // A rerun of np1 in the latency profile: another run of the same candidate and workload.
  const flat = fs.mkdtempSync(path.join(os.tmpdir(), 'sloscope-rerun-'));
  const files = exampleFiles().map((p) => ({ name: path.basename(p), text: fs.readFileSync(p, 'utf8') }));
  // Its own measurement: every time 2 % longer (a copy of the same requests would be one
  // measurement labelled twice, which the analysis refuses).
  const run = stretch(JSON.parse(files.find((f) => f.name === 'latency--np1.json').text), 1.02);
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
  const generation = await page.getAttribute('main', 'data-generation');
  await page.check('#pool-reruns');
  await page.waitForFunction((g) => document.querySelector(`main[data-ready="true"]:not([data-generation="${g}"])`), generation);
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
    // What is judged stands above the verdicts, on the first screen.
    const subject = await page.locator('#subject').boundingBox();
    const firstCard = await page.locator('.overview .card').first().boundingBox();
    assert.ok(subject && subject.y + subject.height <= firstCard.y + 1, 'the subject is above the verdict cards');
    assert.match(await page.locator('#subject').textContent(), /smollm2-135m-instruct-q8_0/);
    for (const p of expected.view.profiles) {
      const box = await page.locator(`.overview .card[data-profile="${p.profile}"] .headline`).boundingBox();
      assert.ok(box && box.y + box.height <= height, `${p.profile} headline ends at ${box && box.y + box.height} px, below the first ${height} px`);
      // What to do about a verdict that is not an accept is on its card, on the first screen
      // (a phone too); an accept's "deploy" is its card's configuration, in its section on a phone.
      if (p.decision !== 'accept' && p.next_step) {
        const next = await page.locator(`.overview .card[data-profile="${p.profile}"] .next`).boundingBox();
        assert.ok(next && next.y + next.height <= height, `${p.profile}: its next step ends at ${next && next.y + next.height} px, below the first ${height} px`);
      }
    }
    assert.equal((await page.locator('#files-status').textContent()).trim(), `Files: ${exampleFiles().length} loaded ✓`);
    assert.equal(await page.locator('section.files details').getAttribute('open'), null, 'the file list is folded when every file loaded');
    const notes = (await page.locator('#lineage-notes li').allTextContents()).map((n) => n.trim());
    assert.deepEqual(notes, expected.view.lineage.notes.map((n) => `note: ${n}`));
    assert.ok(notes.some((n) => n.includes('measured by sloscope gate')), notes.join('\n'));
    await page.screenshot({ path: path.join(shots, `first-screen-${width}.png`) });
    // A table scrolled to its middle: [wider than its box, candidate in view, SLO in view].
    const held = () => page.locator('#table-latency').evaluate((t) => {
      const wrap = t.parentElement;
      wrap.scrollLeft = (wrap.scrollWidth - wrap.clientWidth) / 2;
      const box = wrap.getBoundingClientRect();
      const row = t.querySelector('tbody tr');
      const inside = (el) => { const r = el.getBoundingClientRect(); return r.left >= box.left - 1 && r.right <= box.right + 1; };
      return [wrap.scrollWidth > wrap.clientWidth, inside(row.firstElementChild), inside(row.lastElementChild)];
    });
    if (width < 1280) {
      // The toolbar takes two rows of buttons on a phone, not three.
      const bar = await page.locator('.toolbar').boundingBox();
      const button = await page.locator('#browse').boundingBox();
      assert.ok(bar.height < 2.6 * button.height + 16, `the toolbar is ${bar.height} px tall, buttons ${button.height} px`);
      // A phone scrolls even the decisive columns sideways; the candidate and its SLO stay.
      const h = await held();
      assert.ok(h[0], 'the phone table scrolls sideways');
      assert.deepEqual(h.slice(1), [true, true], 'on a phone the candidate and SLO columns scroll out of view');
    }
    if (width >= 1280) {
      // The decisive columns fit without sideways scrolling; the rest wait behind "More columns".
      for (const p of expected.view.profiles) {
        const fits = await page.locator(`#table-${p.profile}`).evaluate((t) => t.parentElement.scrollWidth <= t.parentElement.clientWidth + 1);
        assert.ok(fits, `${p.profile}: the decisive columns are clipped`);
        const shown = await page.locator(`#table-${p.profile} thead th`).evaluateAll((ths) => ths.filter((th) => getComputedStyle(th).display !== 'none').map((th) => th.textContent.trim()));
        assert.deepEqual(shown, p.candidates.columns.filter((c) => c.decisive).map((c) => c.title));
      }
      // Each profile's charts open with what decides it, as the core chose (the SLO chart, then
      // the deciding metric's chart), and the reason; every other chart is folded under "More
      // charts" and draws at its width when opened.
      const ids = { slo: 'slo', tradeoff: 'tradeoff', cdf_ttft: 'cdf-ttft', cdf_tpot: 'cdf-tpot', cdf_e2e: 'cdf-e2e', capacity: 'capacity-slo', search: 'search' };
      for (const p of expected.view.profiles) {
        const first = await page.locator(`#profile-${p.profile} .charts.first canvas`).evaluateAll((cs) => cs.map((c) => c.id));
        assert.deepEqual(first, p.charts.first.map((k) => `chart-${p.profile}-${ids[k]}`), `${p.profile}: the charts shown first`);
        assert.equal(first[0], `chart-${p.profile}-slo`);
        assert.equal((await page.locator(`#profile-${p.profile} .charts-why`).textContent()).trim(), p.charts.first_reason);
        const caption = (await page.locator(`#profile-${p.profile} figure:has(#chart-${p.profile}-slo) figcaption span`).textContent()).trim();
        assert.equal(caption, p.charts.slo_caption);
        const fold = page.locator(`#more-charts-${p.profile}`);
        assert.equal(await fold.getAttribute('open'), null, `${p.profile}: the other charts are folded`);
        const folded = await fold.locator('canvas, p.chart-none').count();
        assert.ok(folded >= 3, `${p.profile}: ${folded} charts folded`);
        assert.equal((await fold.locator('summary').textContent()).trim(), `More charts (${folded})`);
      }
      // Opened, a folded chart is redrawn to the box it now has (not squeezed).
      await page.locator('#more-charts-latency summary').click();
      await page.waitForFunction(() => {
        const c = document.querySelector('#more-charts-latency canvas');
        return c && c.dataset.drawn === 'true' && Math.abs(c.clientWidth - c.parentElement.clientWidth + 12) <= 14;
      }, null, { timeout: 10000 });
      const [cw, ch, bw, bh] = await page.locator('#more-charts-latency canvas').first().evaluate((c) => [c.clientWidth, c.clientHeight, c.width, c.height]);
      assert.ok(Math.abs(cw / ch - bw / bh) < 0.02, `a folded chart opened at ${cw}×${ch} from a ${bw}×${bh} bitmap`);
      // Each metric heading says in words what it holds.
      const titles = await page.locator('#table-latency thead th').evaluateAll((ths) => ths.map((th) => [th.textContent.trim(), th.title]));
      const ttft = titles.find(([t]) => t === 'ttft_p95_ms');
      assert.equal(ttft[1], 'time to first token, 95th percentile (ms)');
      // Scrolled to the middle, the candidate and the SLO column stay inside the visible box,
      // with the decisive columns only (a phone's table is wider than the phone) and with all.
      for (const more of [false, true]) {
        if (more) await page.click('#more-columns-latency');
        const h = await held();
        if (h[0]) assert.deepEqual(h.slice(1), [true, true], `${width}: the candidate and SLO columns scroll out of view (${more ? 'every column' : 'the decisive ones'})`);
      }
      const all = await page.locator('#table-latency thead th').evaluateAll((ths) => ths.filter((th) => getComputedStyle(th).display !== 'none').length);
      assert.equal(all, expected.view.profiles[0].candidates.columns.length);
    }
    // A card's link lands on its profile's section with the heading below the sticky toolbar.
    await page.click('.overview .card[data-profile="throughput"]');
    await page.waitForTimeout(300);
    const toolbar = await page.locator('.toolbar').boundingBox();
    const heading = await page.locator('#profile-throughput h2, #profile-throughput h3').first().boundingBox();
    assert.ok(heading.y >= toolbar.y + toolbar.height - 1, `the heading (top ${heading.y}) is under the toolbar (bottom ${toolbar.y + toolbar.height})`);
    assert.deepEqual(errors, []);
    await ctx.close();
  });
}

test('phone width: readable, no sideways scrolling of the page, charts at the screen density', async () => {
  const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
  const { page, errors } = await newPage(ctx);
  await page.goto(url);
  await page.click('#load-example');
  await waitLoaded(page, exampleFiles().length);
  await chartsDrew(page);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `page is ${overflow}px wider than the screen`);
  // Charts are drawn at the screen's density (2 device pixels per CSS pixel here), not blurred.
  // (Charts in a closed fold have no box; they are checked once it opens.)
  await page.locator('#more-charts-balanced summary').click();
  await page.waitForFunction(() => [...document.querySelectorAll('#more-charts-balanced canvas')].every((c) => c.dataset.drawn === 'true' && c.clientWidth > 0 && Math.abs(c.width - 2 * c.clientWidth) <= 2));
  const sizes = await page.$$eval('canvas', (cs) => cs.filter((c) => c.clientWidth > 0).map((c) => [c.width, c.clientWidth, c.height, c.clientHeight]));
  assert.ok(sizes.length >= 6, `${sizes.length} charts shown`);
  for (const [w, cw, h, ch] of sizes) assert.ok(Math.abs(w - 2 * cw) <= 2 && Math.abs(h - 2 * ch) <= 2, `a ${cw}×${ch} chart has a ${w}×${h} bitmap`);
  await page.screenshot({ path: path.join(shots, 'example-phone.png'), fullPage: false });
  assert.deepEqual(errors, []);
  await ctx.close();
});

/// The printed PDF, as pdftotext (poppler) reads it, holds the header naming what is judged on
/// its first page, a page number on every page, and each table's last column whole: every word
/// of the heading and of each cell (text cut at the paper's edge is not in the PDF's text).
function checkPdfText(pdf, kept) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sloscope-print-'));
  fs.writeFileSync(path.join(dir, 'report.pdf'), pdf);
  if (process.env.KEEP_PDF) fs.copyFileSync(path.join(dir, 'report.pdf'), process.env.KEEP_PDF);
  const pages = execFileSync('pdftotext', ['-enc', 'UTF-8', path.join(dir, 'report.pdf'), '-']).toString().split('\f').filter((p) => p.trim());
  fs.rmSync(dir, { recursive: true, force: true });
  assert.ok(pages.length >= 2, `${pages.length} printed pages`);
  // Compared as letters and digits only: the PDF's text has the CSS-made colons, case and line
  // breaks (pdftotext joins a word hyphenated across lines), the DOM's has not.
  const flat = (t) => t.normalize('NFKC').replace(/[^\p{L}\p{N}]+/gu, '').toLowerCase();
  const words = (t) => t.split(/\s+/).map(flat).filter(Boolean);
  const first = flat(pages[0]);
  const missing = kept.subject.flatMap(words).filter((w) => !first.includes(w));
  assert.deepEqual(missing, [], 'words of the header that are not on the first printed page');
  pages.forEach((p, i) => assert.match(p, new RegExp(`page ${i + 1} of ${pages.length}`), `page ${i + 1} is numbered`));
  const all = flat(pages.join(' '));
  const cut = kept.lastColumns.flatMap(({ table, cells }) => cells.flatMap(words).filter((w) => !all.includes(w)).map((w) => `${table}: ${w}`));
  assert.deepEqual(cut, [], 'words of a table\'s last column that are not in the printed text');
  assert.ok(kept.lastColumns.length >= 4, `${kept.lastColumns.length} tables checked`);
}

test('print: every folded panel opens (lineage table, file list), light colours even from dark mode, and the PDF (read by pdftotext) keeps the header, page numbers and every table\'s last column', async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'dark' });
  const { page, errors } = await newPage(ctx);
  await page.goto(url);
  await page.click('#load-example');
  await waitLoaded(page, exampleFiles().length);
  const wrapped = () => page.$$eval('.verdict .decision', (bs) => bs.filter((b) => b.getBoundingClientRect().height > 2.2 * parseFloat(getComputedStyle(b).fontSize) + 24).map((b) => b.textContent));
  // On screen first, at a laptop's width: one line per decision badge ("ACCEP T" was).
  for (const width of [1440, 1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    assert.deepEqual(await wrapped(), [], `a decision badge wraps at ${width} px`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  const folded = () => page.$$eval('details', (ds) => ds.filter((d) => !d.open).length);
  assert.ok((await folded()) > 0, 'something is folded on screen');
  await page.evaluate(() => window.dispatchEvent(new Event('beforeprint')));
  assert.equal(await folded(), 0, 'every panel open for print');
  await page.emulateMedia({ media: 'print', colorScheme: 'dark' });
  assert.ok(await page.locator('#lineage-table').isVisible(), 'the lineage table prints');
  assert.ok(await page.locator('#file-list li').first().isVisible(), 'the file list prints');
  const bg = await page.evaluate(() => getComputedStyle(document.querySelector('.verdict')).backgroundColor);
  assert.equal(bg, 'rgb(255, 255, 255)', 'a printed verdict is on white');
  // At an A4 page's printable width (about 700 CSS px) every table keeps all its columns on
  // the page, and a decision badge stays on one line.
  await page.setViewportSize({ width: 700, height: 900 });
  const cut = await page.$$eval('table', (ts) => ts.filter((t) => t.getBoundingClientRect().right > document.documentElement.clientWidth + 1).map((t) => t.id || t.className));
  assert.deepEqual(cut, [], 'tables cut at the page edge');
  assert.deepEqual(await wrapped(), [], 'a decision badge wraps');
  assert.ok(await page.locator('#subject').isVisible(), 'what is judged prints');
  // What print must keep, read from the page: the header's lines, and each table's last column
  // (its heading and every cell), where a table too wide for the paper is cut.
  const kept = await page.evaluate(() => ({
    subject: document.querySelector('#subject').innerText.split('\n').map((l) => l.trim()).filter(Boolean),
    lastColumns: [...document.querySelectorAll('table')].filter((t) => t.rows.length > 0).map((t) => ({
      table: t.id || t.className,
      cells: [...t.rows].map((r) => r.cells[r.cells.length - 1]?.innerText.trim() ?? '').filter(Boolean),
    })),
  }));
  const pdf = await page.pdf({ format: 'A4' });
  assert.ok(pdf.length > 10000 && pdf.subarray(0, 5).toString() === '%PDF-', 'a PDF');
  checkPdfText(pdf, kept);
  await page.evaluate(() => window.dispatchEvent(new Event('afterprint')));
  assert.ok((await folded()) > 0, 'folded again after printing');
  assert.deepEqual(errors, []);
  await ctx.close();
});
