// A hostile copy of the example set dropped on the page, and opened again as the downloaded
// report: a candidate named with a right-to-left override, an escape sequence, markup, a tower
// of combining marks and 400 more letters; run notes with the same; file names with an override.
// Every place such a string appears shows it inert (visible escapes, markup as text, at most two
// marks per letter) and the layout holds: no box is overflowed by its content and the page does
// not scroll sideways, at laptop and phone width.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';
import { servedPage, newPage, dropFiles, waitLoaded } from './lib.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const examples = path.join(root, 'static/examples');
const RLO = '\u202e';
const HOSTILE = `np4${RLO}\u001b[31m<b>bold</b><img src=x onerror=alert(1)>${'\u0301'.repeat(500)}${'w'.repeat(400)}`;

const it = servedPage(root, { before, after }, serve, chromium);

let noted = 0;

/// Every string equal to "np4" renamed (plan and runs agree), a hostile note on every run.
function hostile(v, isRun) {
  if (Array.isArray(v)) return v.map((x) => hostile(x, false));
  if (typeof v === 'string') return v === 'np4' ? HOSTILE : v;
  if (v && typeof v === 'object') {
    const out = {};
    for (const [k, x] of Object.entries(v)) out[k] = hostile(x, false);
    // A note of its own per run (notes shared by candidates are listed once, behind their
    // names, and a hostile name fills the 300 characters a line keeps).
    if (isRun && Array.isArray(out.notes)) out.notes.push(`note ${++noted} ${RLO}\u001b]8;;x\u0007<script>alert(2)</script>${'\u0300'.repeat(500)}`);
    return out;
  }
  return v;
}

function hostileFiles() {
  const out = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.json')) {
        const v = JSON.parse(fs.readFileSync(p, 'utf8'));
        out.push({ name: `${RLO}${path.relative(examples, p)}`, text: JSON.stringify(hostile(v, v.kind === 'run')) });
      }
    }
  };
  walk(examples);
  return out;
}

/// What the page shows, checked: nothing raw, markup as text, the layout held.
async function inertAndHeld(page, where) {
  const found = await page.evaluate(() => {
    const text = document.body.innerText;
    const boxes = ['.card', '.verdict', '.what', '#file-list li', '#lineage-notes li', '.run-notes li', '.server-signals li', '.excluded li', 'h2', 'h3', 'figcaption', 'p'];
    const overflowing = [];
    for (const sel of boxes) {
      for (const el of document.querySelectorAll(sel)) {
        if (el.closest('.scroll') || el.offsetParent === null) continue;
        if (el.scrollWidth > el.clientWidth + 1) overflowing.push(`${sel} (${el.scrollWidth} > ${el.clientWidth}): ${el.innerText.slice(0, 60)}`);
      }
    }
    return {
      rlo: text.includes('\u202e'),
      esc: text.includes('\u001b'),
      tower: /\p{M}{3,}/u.test(text),
      escaped: text.includes('\\u{202e}'),
      markup: [text.includes('<b>bold</b>'), text.includes('<script>alert(2)</script>')],
      injected: document.querySelectorAll('b, img[src="x"], script:not([src]):not([type])').length,
      overflowing,
      sideways: document.documentElement.scrollWidth - window.innerWidth,
    };
  });
  assert.equal(found.rlo, false, `${where}: a raw right-to-left override is shown`);
  assert.equal(found.esc, false, `${where}: a raw escape character is shown`);
  assert.equal(found.tower, false, `${where}: three or more combining marks in a row are shown`);
  assert.ok(found.escaped, `${where}: the override is shown as a visible escape`);
  assert.deepEqual(found.markup, [true, true], `${where}: the markup (a name's, a note's) is shown as text`);
  assert.equal(found.injected, 0, `${where}: markup from a file became elements`);
  assert.deepEqual(found.overflowing, [], `${where}: content overflows its box`);
  assert.ok(found.sideways <= 1, `${where}: the page is ${found.sideways} px wider than the screen`);
}

async function openEverything(page) {
  await page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; }));
}

for (const [width, height] of [[1280, 900], [390, 844]]) {
  test(`a hostile example set at ${width} px: every file string inert, the layout holds, in the page and the report`, async () => {
    const files = hostileFiles();
    const ctx = await it.browser.newContext({ viewport: { width, height } });
    const { page, errors } = await newPage(ctx, it.url);
    await page.goto(it.url);
    // The app listens for drops once it has mounted.
    await page.waitForSelector('#load-example');
    await dropFiles(page, files);
    await waitLoaded(page, files.length);
    assert.equal(await page.locator('#file-list li.bad').count(), 0, (await page.locator('#file-list li.bad').allTextContents()).join('\n'));
    await openEverything(page);
    await inertAndHeld(page, `page at ${width} px`);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-report')]);
    const saved = path.join(os.tmpdir(), `sloscope-hostile-${width}-${process.pid}.html`);
    await download.saveAs(saved);
    const offline = await it.browser.newContext({ viewport: { width, height }, offline: true });
    const { page: rp, errors: rerrors } = await newPage(offline);
    await rp.goto(`file://${saved}`);
    await waitLoaded(rp, files.length);
    await openEverything(rp);
    await inertAndHeld(rp, `report at ${width} px`);
    assert.deepEqual(errors, []);
    assert.deepEqual(rerrors.filter((e) => !e.startsWith('external request file:')), []);
    fs.rmSync(saved, { force: true });
    await offline.close();
    await ctx.close();
  });
}
