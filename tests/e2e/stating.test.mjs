// End to end: other tools' files dropped without a plan get a verdict in the page from SLOs
// stated there. Two real vLLM files (its --save-detailed output, sent 40 times over; one on a
// server 1.6x slower) with the example's lineage records: the page makes a plan of the
// statement, judges as `sloscope import --plan` + `sloscope analyze` judge the same files under
// that plan, keeps the statement across a reload, replaces it when stated again, and says
// why a statement cannot make a plan.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';
import { servedPage, newPage, waitLoaded, dropFiles } from './lib.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const sloscope = path.resolve(process.env.SLOSCOPE_BIN || path.join(root, 'target/debug/sloscope'));
const lineage = path.join(root, 'static/examples/lineage');
const it = servedPage(root, { before, after }, serve, chromium);
const STATED = 'plan-stated-in-the-page.json';

// vLLM's detailed file, its 20 requests sent `copies` times one batch after another, every
// time stretched by `slower`.
function vllm(slower, copies = 40) {
  const f = JSON.parse(fs.readFileSync(path.join(root, 'tests/fixtures/peers/vllm/save-detailed.json'), 'utf8'));
  for (const k of ['ttfts', 'latencies', 'start_times', 'queue_times']) f[k] = f[k].map((t) => t * slower);
  f.itls = f.itls.map((g) => g.map((t) => t * slower));
  const span = 2 * slower * f.duration;
  for (const [k, v] of Object.entries(f)) {
    if (!Array.isArray(v) || v.length !== 20) continue;
    const one = [...v];
    for (let c = 1; c < copies; c++) v.push(...one.map((x) => (k === 'start_times' ? x + c * span : x)));
  }
  for (const k of ['num_prompts', 'completed', 'failed', 'total_input_tokens', 'total_output_tokens']) f[k] *= copies;
  f.duration = (copies - 1) * span + f.duration;
  f.request_throughput = f.completed / f.duration;
  f.output_throughput = f.total_output_tokens / f.duration;
  f.total_token_throughput = (f.total_input_tokens + f.total_output_tokens) / f.duration;
  return JSON.stringify(f);
}

const records = ['deployment.json', 'gate.json', 'baseline.json'].map((n) => ({ name: n, text: fs.readFileSync(path.join(lineage, n), 'utf8') }));
const peers = [{ name: 'fast.json', text: vllm(1) }, { name: 'slow.json', text: vllm(1.6) }];

// The stated plan as the page keeps it (IndexedDB), once it is there.
async function keptPlan(page) {
  const handle = await page.waitForFunction((name) => new Promise((res) => {
    const r = indexedDB.open('sloscope', 1);
    r.onsuccess = () => {
      const g = r.result.transaction('loaded').objectStore('loaded').get('set');
      g.onsuccess = () => res(g.result?.files.find((f) => f.name === name)?.content ?? false);
      g.onerror = () => res(false);
    };
    r.onerror = () => res(false);
  }), STATED, { timeout: 20000 });
  return handle.jsonValue();
}

// `sloscope import --plan` of the files (each its own candidate, named as its stem, or all
// one `candidate` given together) under the page's plan, then `sloscope analyze`.
function cli(planJson, given = peers, together = null) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sloscope-stated-'));
  const plan = JSON.parse(planJson);
  plan.target = { endpoint: 'http://127.0.0.1:9' };
  plan.lineage = { gate: path.join(lineage, 'gate.json'), baseline: path.join(lineage, 'baseline.json'), deployment: path.join(lineage, 'deployment.json') };
  fs.writeFileSync(path.join(dir, 'plan.json'), JSON.stringify(plan));
  for (const f of given) fs.writeFileSync(path.join(dir, f.name), f.text);
  const groups = together ? [[given.map((f) => f.name), together]] : given.map((f) => [[f.name], path.basename(f.name, '.json')]);
  for (const [names, candidate] of groups) {
    execFileSync(sloscope, ['import', ...names, '--plan', 'plan.json', '--profile', 'balanced', '--candidate', candidate, '--out', 'out'], { cwd: dir, stdio: 'pipe' });
  }
  const out = JSON.parse(execFileSync(sloscope, ['analyze', 'out', '--format', 'json'], { cwd: dir }).toString());
  fs.rmSync(dir, { recursive: true, force: true });
  return out;
}

// `sloscope import --profile balanced --slo` of the two files (no plan: the command line's
// statement of the same SLOs), then `sloscope analyze`.
function cliStated(slos) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sloscope-stated-cli-'));
  for (const f of peers) fs.writeFileSync(path.join(dir, f.name), f.text);
  execFileSync(sloscope, ['import', ...peers.map((f) => f.name), '--profile', 'balanced', ...slos.flatMap((x) => ['--slo', x]), '--lineage', lineage, '--out', 'out'], { cwd: dir, stdio: 'pipe' });
  const out = JSON.parse(execFileSync(sloscope, ['analyze', 'out', '--format', 'json'], { cwd: dir }).toString());
  fs.rmSync(dir, { recursive: true, force: true });
  return out;
}

// The balanced card reads as the CLI's: decision, pick, reason, SLO line, the candidates' table.
async function sameAsCli(page, expected) {
  const i = expected.profiles.findIndex((p) => p.profile === 'balanced');
  const [p, v] = [expected.profiles[i], expected.view.profiles[i]];
  const card = page.locator('.verdict[data-profile="balanced"]');
  const text = async (loc) => (await loc.textContent()).trim();
  assert.equal(await card.locator('.decision').getAttribute('data-decision'), p.decision);
  assert.equal(await text(card.locator('.recommended')), p.recommended_name ?? 'no pick');
  assert.equal(await text(card.locator('.reason')), v.reason);
  assert.equal(await text(page.locator('#profile-balanced p.slo')), v.slo_line);
  for (const row of v.candidates.rows) {
    const cells = await page.locator(`#table-balanced tbody tr[data-candidate="${row.key}"]`).locator('th, td').allTextContents();
    assert.deepEqual(cells.map((c) => c.trim()), row.cells.map((c) => c.text), row.key);
  }
  return p;
}

async function judge(page, ttft) {
  const g = await page.getAttribute('main', 'data-generation');
  await page.fill('#state-balanced-ttft_p95_ms', String(ttft));
  await page.click('#state-judge');
  await page.waitForFunction((g) => document.querySelector(`main[data-ready="true"]:not([data-generation="${g}"])`) && document.querySelector('.verdict[data-profile="balanced"]'), g, { timeout: 30000 });
  await waitLoaded(page, records.length + peers.length + 1);
}

test('SLOs stated in the page judge other tools\' files as sloscope import --plan does, kept across a reload', async () => {
  const ctx = await it.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, errors } = await newPage(ctx, it.url);
  await page.goto(it.url);
  await dropFiles(page, [...records, ...peers]);
  await waitLoaded(page, records.length + peers.length);
  const rows = page.locator('#state-files tbody tr');
  assert.equal(await rows.count(), 2);
  // Each file's candidate is named after it; its profile is the one guessed from its load.
  assert.deepEqual(await page.$$eval('#state-files input[id$="-candidate"]', (is) => is.map((i) => i.value)), ['fast', 'slow']);
  for (const s of await page.$$('#state-files select[id$="-profile"]')) await s.selectOption('balanced');
  // The fixture fails 2 requests in 20: its failure rate is no SLO of this statement.
  await page.fill('#state-balanced-failure_rate', '');
  await judge(page, 6000);
  const plan = await keptPlan(page);
  const expected = cli(plan);
  const p = await sameAsCli(page, expected);
  assert.equal(p.decision, 'accept', p.reason);
  assert.equal(p.recommended_name, 'fast');
  // The command line states the same SLOs without a plan: the same verdict, word for word.
  await sameAsCli(page, cliStated(['ttft_p95_ms=6000']));
  // The statement is shown again, as stated, to be changed.
  assert.equal(await page.inputValue('#state-balanced-ttft_p95_ms'), '6000');
  assert.equal((await page.textContent('#state-judge')).trim(), 'Judge again');

  // A reload keeps the plan and the places.
  await page.reload();
  await waitLoaded(page, records.length + peers.length + 1);
  await page.waitForSelector('.verdict[data-profile="balanced"]');
  await sameAsCli(page, expected);

  // Stated again, tighter: one stated plan, replaced; the CLI agrees under the new one.
  await judge(page, 2000);
  const names = await page.$$eval('#file-list li.ok', (ls) => ls.map((l) => l.textContent));
  assert.equal(names.filter((n) => n.includes(STATED)).length, 1, names.join('\n'));
  await page.waitForFunction(() => document.querySelector('.verdict[data-profile="balanced"] .decision')?.getAttribute('data-decision') === 'tune');
  const tighter = cli(await keptPlan(page));
  assert.equal((await sameAsCli(page, tighter)).decision, 'tune');

  // A statement that cannot make a plan says why, and changes nothing.
  await page.fill('#state-files input[id$="-candidate"] >> nth=0', 'a b');
  await page.click('#state-judge');
  await page.waitForSelector('#state-error');
  assert.match(await page.textContent('#state-error'), /fast\.json: candidate "a b": expected letters, digits/);
  await page.fill('#state-files input[id$="-candidate"] >> nth=0', 'fast');
  await page.fill('#state-balanced-ttft_p95_ms', 'soon');
  await page.click('#state-judge');
  await page.waitForFunction(() => /balanced: ttft_p95_ms is "soon": expected a number/.test(document.querySelector('#state-error')?.textContent ?? ''));
  assert.equal(await page.getAttribute('.verdict[data-profile="balanced"] .decision', 'data-decision'), 'tune');
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('each file gets its own candidate name by default, even where two files share a stem', async () => {
  const ctx = await it.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, errors } = await newPage(ctx, it.url);
  await page.goto(it.url);
  const text = fs.readFileSync(path.join(root, 'tests/fixtures/peers/vllm/save-detailed.json'), 'utf8');
  // The same stem twice, and a name that is no plain token.
  await dropFiles(page, [{ name: 'run.json', text }, { name: 'run.jsonl', text: vllm(1.2, 2) }, { name: '..odd name (1).json', text: vllm(1.1, 2) }]);
  await waitLoaded(page, 3);
  await page.waitForSelector('#state-files');
  assert.deepEqual(await page.$$eval('#state-files input[id$="-candidate"]', (is) => is.map((i) => i.value)), ['run', 'run-2', 'odd-name--1-']);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('files the analysis reads as one run (llmperf\'s records and summary) are stated as one, as sloscope import joins them', async () => {
  const ctx = await it.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, errors } = await newPage(ctx, it.url);
  await page.goto(it.url);
  const dir = path.join(root, 'tests/fixtures/peers/llmperf');
  const pair = fs.readdirSync(dir).sort().map((n) => ({ name: n, text: fs.readFileSync(path.join(dir, n), 'utf8') }));
  await dropFiles(page, [...records, ...pair]);
  await waitLoaded(page, records.length + pair.length);
  await page.waitForSelector('#state-files');
  // One row: the records file, holding its summary.
  const rows = page.locator('#state-files tbody tr');
  assert.equal(await rows.count(), 1);
  assert.match(await rows.locator('td.placed').textContent(), /with smollm2-q4_64_32_summary\.json: one run/);
  await page.selectOption('#state-files select[id$="-profile"]', 'balanced');
  await page.fill('#state-files input[id$="-candidate"]', 'llmperf');
  await page.fill('#state-balanced-failure_rate', '');
  const g = await page.getAttribute('main', 'data-generation');
  await page.fill('#state-balanced-ttft_p95_ms', '100000');
  await page.click('#state-judge');
  await page.waitForFunction((g) => document.querySelector(`main[data-ready="true"]:not([data-generation="${g}"])`) && document.querySelector('.verdict[data-profile="balanced"]'), g, { timeout: 30000 });
  await waitLoaded(page, records.length + pair.length + 1);
  const expected = cli(await keptPlan(page), pair, 'llmperf');
  const p = await sameAsCli(page, expected);
  // One run of the candidate, judged: no conflict of one measurement with itself, and
  // llmperf's own token counts (a Llama tokenizer's) not taken for a workload past its cap.
  assert.deepEqual(p.excluded ?? [], []);
  assert.notEqual(p.decision, 'incomplete', p.reason);
  assert.deepEqual(errors, []);
  await ctx.close();
});
