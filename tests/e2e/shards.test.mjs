// End to end: a sharded results tree (two `sloscope run --shard-from-env` processes against the
// test kit's scripted server, index 0 run twice as a retried pod would) chosen on the page as a
// directory (the "Folder…" input, real files). The page's shards panel, verdicts and tables must
// equal `sloscope analyze` on the same directory.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';
import { servedPage, newPage, waitLoaded, checkAgainstCli } from './lib.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const sloscope = path.resolve(process.env.SLOSCOPE_BIN || path.join(root, 'target/debug/sloscope'));
const scripted = path.join(path.dirname(sloscope), 'scripted-server');

const it = servedPage(root, { before, after }, serve, chromium);

function shard(results, k) {
  const plan = path.join(root, 'tests/fixtures/scripted/plan.toml');
  const r = spawnSync(sloscope, ['run', '--plan', plan, '--out', results, '--shard-from-env', '--shards', '2', '--profiles', 'latency', '-q'],
    { env: { ...process.env, JOB_COMPLETION_INDEX: String(k), SLOSCOPE_SCRIPTED_SERVER: scripted } });
  assert.equal(r.status, 0, r.stderr.toString());
}

test('a sharded results tree chosen as a folder reads as sloscope analyze reads it', async () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'sloscope-shards-'));
  const results = path.join(work, 'results');
  for (const k of [0, 1, 0]) shard(results, k);
  const cli = spawnSync(sloscope, ['analyze', 'results', '--format', 'json'], { cwd: work });
  assert.equal(cli.status, 0, cli.stderr.toString());
  const expected = JSON.parse(cli.stdout.toString());
  assert.equal(expected.shards.complete, true);
  assert.equal(expected.view.shards.left_out.length, 1, 'the first attempt of index 0 is left out');
  const jsonFiles = spawnSync('find', [results, '-name', '*.json']).stdout.toString().trim().split('\n').length;

  const ctx = await it.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, errors } = await newPage(ctx, it.url);
  await page.goto(it.url);
  await page.setInputFiles('#folder-input', results);
  await waitLoaded(page, jsonFiles);
  assert.equal(await page.locator('#file-list li.bad').count(), 0, 'every file of the tree read');
  assert.equal((await page.locator('#shards-status').textContent()).trim(), 'complete');
  const v = expected.view.shards;
  const left = (await page.locator('#shard-left-out li').allTextContents()).map((l) => l.trim());
  assert.deepEqual(left, v.left_out.map((l) => `– ${l}`));
  for (const row of v.table.rows) {
    const cells = await page.locator(`#shards-table tr[data-shard="${row.key}"]`).locator('th, td').allTextContents();
    assert.deepEqual(cells.map((c) => c.trim()), row.cells.map((c) => c.text), `shard ${row.key}`);
  }
  await checkAgainstCli(page, expected);
  assert.deepEqual(errors, []);
  await ctx.close();
});
