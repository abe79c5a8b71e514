// End to end: the example set — its quality gate measured by `sloscope gate` in the demo (Q8_0
// against the F16 on llama-server), and the gate of the artifact not deployed (Q4_0, rejected)
// beside it — chosen on the page as a folder. The gate's evidence is shown first in the lineage
// panel, line for line and bin for bin as `sloscope analyze` shows it, no longer warned as
// asserted, and the other artifact's gate is listed with its decision, not hidden.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';
import { servedPage, newPage, waitLoaded } from './lib.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const sloscope = path.resolve(process.env.SLOSCOPE_BIN || path.join(root, 'target/debug/sloscope'));

const it = servedPage(root, { before, after }, serve, chromium);

test('a measured quality gate is shown first in the lineage panel as the CLI shows it', async () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'sloscope-gate-'));
  const dir = path.join(work, 'examples');
  fs.cpSync(path.join(root, 'static/examples'), dir, { recursive: true });
  const cli = spawnSync(sloscope, ['analyze', 'examples', '--format', 'json'], { cwd: work });
  assert.equal(cli.status, 0, cli.stderr.toString());
  const expected = JSON.parse(cli.stdout.toString()).view.lineage;
  assert.ok(expected.gate, 'the CLI shows the gate');
  const n = spawnSync('find', [dir, '-name', '*.json']).stdout.toString().trim().split('\n').length;

  const ctx = await it.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, errors } = await newPage(ctx, it.url);
  await page.goto(it.url);
  await page.setInputFiles('#folder-input', dir);
  await waitLoaded(page, n);
  assert.equal((await page.locator('#gate-status').textContent()).trim(), `gate measured: ${expected.gate.decision_label}`);
  const lines = (await page.locator('#gate-evidence .gate-lines li').allTextContents()).map((l) => l.trim());
  assert.deepEqual(lines, expected.gate.lines);
  assert.ok(expected.other_gates.length > 0, 'the example set carries another artifact\'s gate');
  const others = (await page.locator('#other-gates li').allTextContents()).map((l) => l.trim());
  assert.deepEqual(others, expected.other_gates);
  assert.ok(others.some((l) => l.includes('measured REJECT over 252 positions')), others.join('\n'));
  const bins = await page.locator('#gate-histogram tbody tr').allTextContents();
  assert.equal(bins.length, expected.gate.histogram.rows.length);
  const warnings = await page.locator('section.lineage ul.warnings li').allTextContents();
  assert.ok(!warnings.some((w) => w.includes('asserted')), warnings.join('\n'));
  assert.deepEqual(errors, []);
  await ctx.close();
});
