// End to end: a configuration search collected by `sloscope run` against the scripted server
// (its TTFT, pace and slots as launch flags, eight slots out of memory) and its folder dropped on
// the page: the profile's search section shows the space and budget, one row per trial in search
// order (infeasible ones with the server's reason), the pick with its confirmation and why the
// others were dropped — the same trials, pick and verdict as `sloscope analyze`.
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

test('a configuration search dropped on the page shows its trials, pick and confirmation as the CLI does', async () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'sloscope-search-'));
  const src = path.join(root, 'tests/fixtures/scripted');
  for (const f of ['gate.json', 'baseline.json', 'deployment.json', 'search.toml']) fs.copyFileSync(path.join(src, f), path.join(work, f));
  const results = path.join(work, 'results');
  const r = spawnSync(sloscope, ['run', '--plan', path.join(work, 'search.toml'), '--out', results, '-q'],
    { env: { ...process.env, SLOSCOPE_SCRIPTED_SERVER: scripted } });
  assert.equal(r.status, 0, r.stderr.toString());
  const cli = spawnSync(sloscope, ['analyze', 'results', '--format', 'json'], { cwd: work });
  const expected = JSON.parse(cli.stdout.toString());
  const s = expected.profiles[0].search;
  assert.equal(s.status, 'complete');
  for (const width of [1280, 390]) {
    const ctx = await it.browser.newContext({ viewport: { width, height: 900 } });
    const { page, errors } = await newPage(ctx, it.url);
    await page.goto(it.url);
    const n = spawnSync('find', [results, '-name', '*.json']).stdout.toString().trim().split('\n').length;
    await page.setInputFiles('#folder-input', results);
    await waitLoaded(page, n);
    const section = page.locator('section.search[aria-label="latency configuration search"]');
    assert.match((await section.locator('h3').textContent()).trim(), /^Configuration search \(complete\), ranked by ttft_p95_ms: space: 3 knobs/);
    const rows = section.locator('tbody tr');
    assert.equal(await rows.count(), s.trials.length);
    for (const [i, t] of s.trials.entries()) {
      const text = await rows.nth(i).textContent();
      assert.ok(text.includes(t.name), `${text} names ${t.name}`);
      assert.ok(text.includes(t.purpose));
      if (t.infeasible) assert.match(text, /infeasible: server did not start/);
    }
    const lines = await section.locator('ul.search-lines').textContent();
    assert.ok(lines.includes(`chose ${s.result.chosen_name} after ${s.result.launches} of ${s.settings.launches} launches`), lines);
    assert.match(lines, /confirmed on fresh launches|NOT upheld on fresh launches/);
    // Its path is one of the charts shown first, drawn (not blank).
    const first = await page.locator('#profile-latency .charts.first canvas').evaluateAll((cs) => cs.map((c) => c.id));
    assert.deepEqual(first, ['chart-latency-slo', 'chart-latency-search']);
    const inked = await page.locator('#chart-latency-search').evaluate((c) => {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i] < 200 || d[i + 1] < 200 || d[i + 2] < 200) n++;
      return n;
    });
    assert.ok(inked > 2000, `the search chart drew ${inked} dark pixels`);
    // The explored space against memory, folded under "More charts": drawn once opened.
    await page.locator('#more-charts-latency > summary').click();
    const space = page.locator('#chart-latency-search-space');
    await space.waitFor();
    await page.waitForFunction(() => {
      const c = document.querySelector('#chart-latency-search-space');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i] < 200 || d[i + 1] < 200 || d[i + 2] < 200) n++;
      return n > 2000;
    }, null, { timeout: 10000 });
    await page.locator('#chart-latency-search-knobs').waitFor();
    const caption = await space.getAttribute('aria-label');
    assert.match(caption, /the explored space/, caption);
    // The table scrolls inside its frame on a phone; the page itself never does sideways.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 1, `the page scrolls sideways by ${overflow} px at ${width} px`);
    await checkAgainstCli(page, expected);
    assert.deepEqual(errors, []);
    await ctx.close();
  }
});
