// A dependency-free static server for dist/ on 127.0.0.1 (port 0), with the wasm MIME type.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.css': 'text/css', '.json': 'application/json', '.png': 'image/png', '.svg': 'image/svg+xml',
};

// Result files under `dir` (*.json, *.journal.jsonl), for the page to load at start.
function preloadScript(dir) {
  const files = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.json') || p.endsWith('.journal.jsonl')) files.push({ name: path.relative(dir, p), text: fs.readFileSync(p, 'utf8') });
    }
  };
  walk(dir);
  // `</` could close the script element; `<\/` is the same string in JSON.
  const json = JSON.stringify({ files }).replaceAll('</', '<\\/');
  return `<script type="application/json" id="sloscope-preload">${json}</script>`;
}

export function serve(root, preloadDir = null, port = 0) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (preloadDir && (url.pathname === '/' || url.pathname === '/index.html')) {
      const html = fs.readFileSync(path.join(root, 'index.html'), 'utf8').replace('<body>', `<body>${preloadScript(preloadDir)}`);
      res.writeHead(200, { 'content-type': TYPES['.html'] });
      res.end(html);
      return;
    }
    let file = path.normalize(path.join(root, decodeURIComponent(url.pathname)));
    if (!file.startsWith(path.resolve(root))) { res.writeHead(403); res.end(); return; }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    fs.readFile(file, (err, data) => {
      if (err) { res.writeHead(404); res.end('not found'); return; }
      res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream' });
      res.end(data);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

// `node tests/e2e/serve.mjs DIST [RESULTS_DIR]`: serve the page on 127.0.0.1 until Ctrl-C,
// with the results preloaded, and print the URL. SLOSCOPE_PORT picks the port (default: any
// free one).
if (import.meta.url === `file://${process.argv[1]}`) {
  const root = path.resolve(process.argv[2] || 'dist');
  const pre = process.argv[3] ? path.resolve(process.argv[3]) : null;
  const port = Number(process.env.SLOSCOPE_PORT || 0);
  serve(root, pre, port).then(
    (s) => console.log(`http://127.0.0.1:${s.address().port}/`),
    (e) => { console.error(`serve: cannot listen on 127.0.0.1:${port}: ${e.message}`); process.exit(2); },
  );
}
