// Helpers shared by the page's end-to-end tests: a page that records its errors, the check that
// the page reads word for word as `sloscope analyze --format json`, chart ink, real drops.
import assert from 'node:assert/strict';

export const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-default-apps', '--disable-extensions'];

export async function newPage(ctx, url) {
  const page = await ctx.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('request', (r) => { if (!r.url().startsWith(url) && !r.url().startsWith('data:') && !r.url().startsWith('blob:') && !r.url().startsWith('file:')) errors.push(`external request ${r.url()}`); });
  return { page, errors };
}

// The page lays out the core's view-model; `sloscope analyze --format json` prints the same
// view beside the numbers. Every verdict, line and table cell must read the same, word for word.
export async function checkAgainstCli(page, expected) {
  const text = async (loc) => (await loc.textContent()).trim();
  const reportCaveats = (await page.locator('#report-caveats li').allTextContents()).map((c) => c.trim());
  assert.deepEqual(reportCaveats, expected.view.caveats.map((c) => `! ${c}`), 'report-wide caveats');
  // What is judged, and the notes every profile shares said once, as the CLI says them.
  const subject = await page.locator('#subject > div').evaluateAll((ds) => ds.map((d) => [d.querySelector('dt').textContent.trim(), d.querySelector('dd').textContent.trim()]));
  assert.deepEqual(subject, (expected.view.subject ?? []).map((l) => [l.label, l.value]), 'subject');
  const legend = await page.locator('#legend dl > div').evaluateAll((ds) => ds.map((d) => [d.querySelector('dt').textContent.trim(), d.querySelector('dd').textContent.trim()]));
  assert.deepEqual(legend, (expected.view.legend ?? []).map((l) => [l.label, l.value]), 'what the verdicts mean');
  const shared = (await page.locator('#shared-notes li').allTextContents()).map((n) => n.trim());
  assert.deepEqual(shared, expected.view.run_notes ?? [], 'notes shared by several profiles');
  for (const [i, p] of expected.profiles.entries()) {
    const v = expected.view.profiles[i];
    assert.equal(v.profile, p.profile);
    const card = page.locator(`.verdict[data-profile="${p.profile}"]`);
    assert.equal(await card.locator('.decision').getAttribute('data-decision'), p.summaries_only ? 'none' : p.decision, `${p.profile} decision`);
    assert.equal(await text(card.locator('.recommended')), p.recommended_name ?? 'no pick', `${p.profile} recommended`);
    assert.equal(await text(card.locator('.reason')), v.reason, `${p.profile} reason`);
    // Absence said as absence: each planned cell not measured, and the provisional answer.
    const missing = (await card.locator('ul.missing li').allTextContents()).map((m) => m.trim());
    assert.deepEqual(missing, v.missing ?? [], `${p.profile} cells not measured`);
    const provisional = card.locator('.provisional');
    assert.equal(await provisional.count() ? await text(provisional) : null, v.provisional_line ?? null, `${p.profile} provisional`);
    // The answer first: the overview card carries the view's headline and caveats.
    const top = page.locator(`.overview .card[data-profile="${p.profile}"]`);
    assert.equal(await text(top.locator('.headline')), v.card_line, `${p.profile} card line`);
    // The next step, on the card and in the profile's verdict, as the view says it.
    const next = top.locator('.next');
    assert.equal(await next.count() ? await text(next) : null, v.next_step ? `Next: ${v.next_step}` : null, `${p.profile} next step (card)`);
    const sectionNext = card.locator('.next');
    assert.equal(await sectionNext.count() ? await text(sectionNext) : null, v.next_step ? `Next: ${v.next_step}` : null, `${p.profile} next step`);
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

export async function chartsDrew(page) {
  const ids = await page.$$eval('canvas', (cs) => cs.map((c) => c.id));
  assert.ok(ids.length >= 4, `charts: ${ids}`);
  for (const id of ids) {
    // Folded charts draw too (hidden until their fold opens).
    await page.waitForSelector(`#${id}[data-drawn="true"]`, { state: 'attached', timeout: 20000 });
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
// `on`: a selector of the element the files land on (they bubble up to the window).
export async function dropFiles(page, files, on = null) {
  // The page takes drops once its app listens on the window (it says so on <html>); a drop
  // before that, on a slow start, would be lost.
  await page.waitForSelector('html[data-drop-ready="true"]', { state: 'attached', timeout: 60000 });
  await page.evaluate(([files, on]) => {
    const dt = new DataTransfer();
    for (const f of files) dt.items.add(new File([f.text], f.name, { type: 'application/json' }));
    const target = on ? document.querySelector(on) : window;
    for (const type of ['dragenter', 'dragover', 'drop']) target.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, [files, on]);
}

export async function waitLoaded(page, n) {
  await page.waitForFunction((n) => document.querySelectorAll('#file-list li.ok, #file-list li.bad').length >= n && !document.querySelector('#file-list li.loading') && document.querySelector('main[data-ready="true"]'), n, { timeout: 60000 });
}


// Every time of a run stretched by `k`: the same server, slower by that much.
export function stretch(v, k, scale = false) {
  if (Array.isArray(v)) return v.map((x) => stretch(x, k, scale));
  if (v && typeof v === 'object') {
    const out = {};
    for (const [key, x] of Object.entries(v)) out[key] = key === 'started_at' || key === 'finished_at' ? null : stretch(x, k, scale || key.endsWith('_us'));
    return out;
  }
  return scale && typeof v === 'number' ? Math.round(v * k) : v;
}

// The built page served from dist/ and a headless Chromium, for one test file: registers the
// node:test hooks and returns a holder whose `browser` and `url` are set once they run.
export function servedPage(root, { before, after }, serve, chromium) {
  const it = {};
  before(async () => {
    it.server = await serve(`${root}/dist`);
    it.url = `http://127.0.0.1:${it.server.address().port}/`;
    it.browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ARGS });
  });
  after(async () => { await it.browser?.close(); it.server?.close(); });
  return it;
}
