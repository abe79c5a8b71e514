// Benchmark (not a test): time from giving the page a run file to its verdict, in headless
// Chromium, against the native `sloscope analyze` on the same file; and the page's size.
// Usage: node tests/e2e/bench.mjs   (after `trunk build --release` and
//        `cargo build --release -p xtask -p sloscope`; files come from `xtask bench-analyze`)
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const xtask = path.join(root, 'target/release/xtask');
const sloscope = path.join(root, 'target/release/sloscope');
const dir = path.join(process.env.TMPDIR || '/tmp', 'sloscope-bench');

const gz = (f) => zlib.gzipSync(fs.readFileSync(f), { level: 9 }).length;
const dist = path.join(root, 'dist');
const wasm = fs.readdirSync(dist).filter((f) => f.endsWith('.wasm')).map((f) => path.join(dist, f));
const js = fs.readdirSync(dist).filter((f) => f.endsWith('.js')).map((f) => path.join(dist, f));
const total = [...wasm, ...js].reduce((s, f) => s + gz(f), 0);
console.log(`page size: wasm ${(wasm.reduce((s, f) => s + fs.statSync(f).size, 0) / 1e6).toFixed(2)} MB raw; wasm + JS gzipped ${(total / 1e6).toFixed(3)} MB`);

const server = await serve(dist);
const url = `http://127.0.0.1:${server.address().port}/`;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
console.log('| requests | file MB | native analyze s | page drop→verdict s | ratio | page result |');
console.log('|---:|---:|---:|---:|---:|---|');
for (const n of [10000, 100000, 1000000]) {
  const file = path.join(dir, `run-${n}x64.json`);
  if (!fs.existsSync(file)) execFileSync(xtask, ['bench-analyze', String(n)], { stdio: 'ignore' });
  const mb = fs.statSync(file).size / 1e6;
  let t = process.hrtime.bigint();
  execFileSync(sloscope, ['analyze', file, '--format', 'json', '--out', path.join(dir, 'out.json')]);
  const native = Number(process.hrtime.bigint() - t) / 1e9;
  const page = await browser.newPage();
  await page.goto(url);
  await page.waitForSelector('#file-input', { state: 'attached' });
  t = process.hrtime.bigint();
  await page.setInputFiles('#file-input', file);
  const outcome = await Promise.race([
    page.waitForSelector('.verdict', { timeout: 120000 }).then(() => 'verdict'),
    page.waitForSelector('#file-list li.bad', { timeout: 120000 }).then(async (el) => `refused: ${(await el.textContent()).slice(0, 90)}…`),
  ]);
  const inPage = Number(process.hrtime.bigint() - t) / 1e9;
  console.log(`| ${n} | ${mb.toFixed(1)} | ${native.toFixed(2)} | ${inPage.toFixed(2)} | ${(inPage / native).toFixed(1)}× | ${outcome} |`);
  await page.close();
}
await browser.close();
server.close();
