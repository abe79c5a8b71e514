// End to end: absence shown as absence. The example set with a planned run taken away, with a
// planned run that cannot be read, and a sharded tree with a shard missing are dropped on the
// page: the profile they leave without a cell reads INCOMPLETE (grey, dashed), naming the cell
// and why, exactly as `sloscope analyze` says it — never ACCEPT, never a red REJECT.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';
import { servedPage, newPage, waitLoaded, checkAgainstCli, dropFiles } from './lib.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const sloscope = path.resolve(process.env.SLOSCOPE_BIN || path.join(root, 'target/debug/sloscope'));
const scripted = path.join(path.dirname(sloscope), 'scripted-server');
const examples = path.join(root, 'static/examples');

const it = servedPage(root, { before, after }, serve, chromium);

/// A copy of the example set, `edit` applied to it.
function exampleCopy(edit) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sloscope-absence-'));
  fs.cpSync(examples, dir, { recursive: true });
  edit(dir);
  return dir;
}

function files(dir) {
  const out = [];
  const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) { const p = path.join(d, e.name); if (e.isDirectory()) walk(p); else if (p.endsWith('.json')) out.push(p); } };
  walk(dir);
  return out.sort().map((p) => ({ name: path.relative(dir, p), text: fs.readFileSync(p, 'utf8') }));
}

async function dropped(dir, expectBad) {
  const fs_ = files(dir);
  // Named as the page names dropped files (relative to the set), so their messages match.
  const cli = spawnSync(sloscope, ['analyze', ...fs_.map((f) => f.name), '--format', 'json'], { cwd: dir });
  const expected = JSON.parse(cli.stdout.toString());
  const ctx = await it.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, errors } = await newPage(ctx, it.url);
  await page.goto(it.url);
  await dropFiles(page, fs_);
  await waitLoaded(page, fs_.length);
  assert.equal(await page.locator('#file-list li.bad').count(), expectBad);
  return { page, errors, ctx, expected };
}

async function absent(page, profile) {
  const card = page.locator(`.overview .card[data-profile="${profile}"]`);
  assert.match(await card.getAttribute('class'), /\bincomplete\b/);
  assert.equal((await card.locator('.decision').textContent()).trim(), 'INCOMPLETE');
  assert.match((await card.locator('.headline').textContent()).trim(), /^not measured: /);
  const style = await card.evaluate((e) => getComputedStyle(e).borderLeftStyle);
  assert.equal(style, 'dashed', 'absence is drawn as absence (grey, dashed), not as a verdict');
  assert.equal(await page.locator('.overview .card.reject').count(), 0, 'nothing missing is shown as a rejection');
}

test('a planned run taken away leaves its profile incomplete on the page, as in the CLI', async () => {
  const dir = exampleCopy((d) => fs.rmSync(path.join(d, 'runs/latency--np4.json')));
  const { page, errors, ctx, expected } = await dropped(dir, 0);
  assert.equal(expected.profiles[0].decision, 'incomplete');
  await absent(page, 'latency');
  assert.match(await page.locator('.verdict[data-profile="latency"] ul.missing').textContent(), /candidate np4 — no run file was loaded/);
  await checkAgainstCli(page, expected);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('a planned run that cannot be read is named where its cell is missing', async () => {
  const dir = exampleCopy((d) => fs.writeFileSync(path.join(d, 'runs/latency--np4.json'), '{"kind": "run", "schema_ver'));
  const { page, errors, ctx, expected } = await dropped(dir, 1);
  await absent(page, 'latency');
  assert.match(await page.locator('.verdict[data-profile="latency"] ul.missing').textContent(), /could not be read \(runs\/latency--np4\.json/);
  await checkAgainstCli(page, expected);
  // Another tool's file then makes the page start its full reader, which is handed every file
  // again — the unreadable one too: the cell stays missing and named, never a clean verdict.
  const peer = path.join(root, 'tests/fixtures/peers/guidellm/benchmarks.json');
  await dropFiles(page, [{ name: 'benchmarks.json', text: fs.readFileSync(peer, 'utf8') }]);
  for (let i = 0; i < 50 && !page.workers().some((w) => w.url().endsWith('sloscope-worker_loader.js')); i++) await page.waitForTimeout(100);
  await waitLoaded(page, files(dir).length + 1);
  await absent(page, 'latency');
  assert.match(await page.locator('.verdict[data-profile="latency"] ul.missing').textContent(), /could not be read \(runs\/latency--np4\.json/);
  assert.equal(await page.locator('#file-list li.bad').count(), 1);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('a sharded tree with a shard missing is incomplete everywhere, never rejected', async () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'sloscope-shard-gap-'));
  const results = path.join(work, 'results');
  const plan = path.join(root, 'tests/fixtures/scripted/plan.toml');
  const r = spawnSync(sloscope, ['run', '--plan', plan, '--out', results, '--shard-from-env', '--shards', '2', '--profiles', 'latency', '-q'],
    { env: { ...process.env, JOB_COMPLETION_INDEX: '0', SLOSCOPE_SCRIPTED_SERVER: scripted } });
  assert.equal(r.status, 0, r.stderr.toString());
  const cli = spawnSync(sloscope, ['analyze', 'results', '--format', 'json'], { cwd: work });
  const expected = JSON.parse(cli.stdout.toString());
  assert.equal(expected.shards.complete, false);
  const ctx = await it.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, errors } = await newPage(ctx, it.url);
  await page.goto(it.url);
  const n = spawnSync('find', [results, '-name', '*.json']).stdout.toString().trim().split('\n').length;
  await page.setInputFiles('#folder-input', results);
  await waitLoaded(page, n);
  for (const p of expected.profiles) {
    assert.equal(p.decision, 'incomplete', p.reason);
    const card = page.locator(`.overview .card[data-profile="${p.profile}"]`);
    assert.match(await card.getAttribute('class'), /\bincomplete\b/);
  }
  assert.equal(await page.locator('.overview .card.reject').count(), 0);
  await checkAgainstCli(page, expected);
  assert.deepEqual(errors, []);
  await ctx.close();
});
