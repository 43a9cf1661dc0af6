// The UI's figures for `npm run bench` (also runnable alone: `node bench/ui.mjs [--quick]`):
//   - how long a held call takes to show as a card in the page, against the event reaching a plain SSE reader
//   - Activity over 100,000 journal entries: the API's first page and filtered queries, against the same
//     queries made in-process on the store, and the first page drawn in the browser
//   - the renderer's JavaScript, gzipped
// Debian's Chromium driven by playwright-core, a real broker, a real wrapped server and the MCP SDK client.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Store } from '../proxy-core/dist/broker/db/store.js';
import { databasePath } from '../proxy-core/dist/ipc/paths.js';
import { launchChromium, signIn, uiLink } from '../test/helpers/chromium.mjs';
import { seedJournal } from './journal-records.mjs';
import { ROOT, FIXTURE, WRAP } from './paths.mjs';
import { median } from './stats.mjs';
import { startBroker } from './own-broker.mjs';

const DIST = join(ROOT, 'renderer', 'dist');
const JOURNAL_ENTRIES = 100_000;

const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.9))];

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

/** Bytes of the built renderer's JavaScript and CSS, gzipped (level 9, as a server would send them). */
export function rendererSize() {
  const all = files(DIST);
  const gz = (ext) => all.filter((f) => f.endsWith(ext)).reduce((n, f) => n + gzipSync(readFileSync(f), { level: 9 }).length, 0);
  const raw = (ext) => all.filter((f) => f.endsWith(ext)).reduce((n, f) => n + statSync(f).size, 0);
  return { jsGz: gz('.js'), jsRaw: raw('.js'), cssGz: gz('.css') };
}

/** `auth`: the headers signIn gives (the session cookie and key). */
async function api(origin, auth, method, params) {
  const res = await fetch(`${origin}/api/call/${method}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: origin, ...auth }, body: JSON.stringify(params) });
  const body = await res.json();
  if (!res.ok) throw new Error(`${method}: ${body.error?.message}`);
  return body.result;
}

/** Reads the event stream as a plain SSE reader would, calling `onEvent` with each event and when it came. */
async function sseReader(origin, auth, onEvent) {
  const head = (await api(origin, auth, 'events', { limit: 1 })).events[0]?.seq ?? 0;
  const ticket = (await (await fetch(`${origin}/api/events/ticket`, { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: origin, ...auth }, body: '{}' })).json()).result.ticket;
  const ac = new AbortController();
  const res = await fetch(`${origin}/api/events?since=${head}&ticket=${ticket}`, { headers: { Cookie: auth.Cookie }, signal: ac.signal });
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        const at = Date.now();
        buf += decoder.decode(value, { stream: true });
        let end;
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const data = block.split('\n').find((l) => l.startsWith('data: '));
          if (data) onEvent(JSON.parse(data.slice(6)), at);
        }
      }
    } catch {
      /* aborted */
    }
  })();
  return () => ac.abort();
}

/** In the page: the time (epoch ms) each approval card's "Allow once" button first appears, by ticket tool text. */
const WATCH_CARDS = () => {
  window.__cards = [];
  const seen = new Set();
  const check = () => {
    for (const b of document.querySelectorAll('button')) {
      // the button's name, without the key it answers to (shown beside it)
      if (!/^Allow once\b/.test(b.textContent.trim()) || seen.has(b)) continue;
      seen.add(b);
      window.__cards.push(Date.now());
    }
  };
  new MutationObserver(check).observe(document.body, { childList: true, subtree: true });
};

export async function cardLatency(quick) {
  const runs = quick ? 8 : 30;
  const home = mkdtempSync(join(tmpdir(), 'al-uibench-'));
  const d = await startBroker({ ...process.env, AIRLOCK_HOME: home }, ['--no-presence', '--ui', '--port', '0']);
  // started inside the try: a browser that fails to start still lets the daemon stop
  let browser;
  const origin = d.url.origin;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...WRAP, '--name', 'bench', '--client', 'bench', '--', process.execPath, FIXTURE],
    env: { ...process.env, AIRLOCK_HOME: home },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'bench', version: '1' });
  try {
    browser = await launchChromium();
    const cookie = await signIn(d.url);
    const page = await browser.context.newPage();
    await page.goto(uiLink(home));
    await page.getByRole('heading', { name: 'Approvals' }).waitFor();
    await page.evaluate(WATCH_CARDS);
    await client.connect(transport);
    const sse = [];
    const stopSse = await sseReader(origin, cookie, (e, at) => e.type === 'ticket-created' && sse.push(at));
    const card = [];
    const event = [];
    for (let i = 0; i < runs; i++) {
      const t0 = Date.now();
      const pending = client.callTool({ name: 'write_note', arguments: { text: `note ${i}` } });
      await page.waitForFunction((n) => window.__cards.length > n, i, { polling: 10 });
      const shown = await page.evaluate((n) => window.__cards[n], i);
      while (sse.length <= i) await new Promise((r) => setTimeout(r, 2));
      card.push(shown - t0);
      event.push(sse[i] - t0);
      const [ticket] = await api(origin, cookie, 'pending', {});
      await api(origin, cookie, 'deny', { id: ticket.id });
      await pending;
      await page.waitForFunction(() => ![...document.querySelectorAll('button')].some((b) => /^Allow once\b/.test(b.textContent.trim())), undefined, { polling: 10 });
    }
    stopSse();
    return { runs, card, event };
  } finally {
    await client.close().catch(() => {});
    await browser?.close();
    await d.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

// the journal's calls start 10 ms apart, ending a minute ago: recent enough that retention keeps them all
const SEED_T0 = Date.now() - JOURNAL_ENTRIES * 10 - 60_000;
// what the Activity page asks: a page of summaries, plain or filtered
const QUERIES = [
  ['first page', { limit: 200, summary: true }],
  ['server filter', { limit: 200, summary: true, server: 'srv3' }],
  ['denied, by tool', { limit: 200, summary: true, decision: 'deny', tool: 'tool_7' }],
  ['text search', { limit: 200, summary: true, text: 'file-9999' }],
  ['time range, deep in the past', { limit: 200, summary: true, from: SEED_T0, to: SEED_T0 + 50_000 }],
];

async function activity(quick) {
  const reps = quick ? 5 : 15;
  const home = mkdtempSync(join(tmpdir(), 'al-uibench-'));
  try {
    // a broker makes its data dir; the journal is then filled directly, as 100,000 calls would have
    await (await startBroker({ ...process.env, AIRLOCK_HOME: home })).stop();
    const store = new Store(databasePath(home));
    seedJournal(store, JOURNAL_ENTRIES, SEED_T0);
    const inProcess = {};
    for (const [name, q] of QUERIES) {
      const times = [];
      for (let r = 0; r < reps; r++) {
        const t0 = performance.now();
        store.history(q);
        times.push(performance.now() - t0);
      }
      inProcess[name] = median(times);
    }
    store.close();
    const d = await startBroker({ ...process.env, AIRLOCK_HOME: home }, ['--no-presence', '--ui', '--port', '0']);
    let browser;
    try {
      browser = await launchChromium();
      const cookie = await signIn(d.url);
      const overHttp = {};
      for (const [name, q] of QUERIES) {
        const times = [];
        for (let r = 0; r < reps; r++) {
          const t0 = performance.now();
          await api(d.url.origin, cookie, 'history', q);
          times.push(performance.now() - t0);
        }
        overHttp[name] = median(times);
      }
      // the page: from opening Activity to its first rows drawn
      const page = await browser.context.newPage();
      await page.goto(uiLink(home));
      await page.getByRole('heading', { name: 'Approvals' }).waitFor();
      const drawn = [];
      for (let r = 0; r < Math.min(reps, 8); r++) {
        await page.evaluate(() => (location.hash = '#/approvals'));
        await page.getByRole('heading', { name: 'Approvals' }).waitFor();
        drawn.push(
          await page.evaluate(
            () =>
              new Promise((resolve, reject) => {
                const t0 = performance.now();
                const done = () => document.querySelector('main')?.textContent?.includes('tool_');
                const obs = new MutationObserver(() => {
                  if (done()) {
                    obs.disconnect();
                    resolve(performance.now() - t0);
                  }
                });
                obs.observe(document.body, { childList: true, subtree: true, characterData: true });
                // a page that never draws its rows fails the run rather than hanging it
                setTimeout(() => reject(new Error('Activity drew no rows within 10 s')), 10_000);
                location.hash = '#/activity';
              }),
          ),
        );
      }
      return { inProcess, overHttp, drawn: median(drawn) };
    } finally {
      await browser?.close();
      await d.stop();
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** The UI rows: [measure, baseline, airlock, comparison, target]. */
export async function uiRows(quick = false) {
  const f = (x, d = 1) => x.toFixed(d);
  const size = rendererSize();
  const lat = await cardLatency(quick);
  const act = await activity(quick);
  const rows = [
    [`held call to card visible in the page (ms, p50 of ${lat.runs})`, `${f(median(lat.event))} (event to an SSE reader)`, f(median(lat.card)), `+${f(median(lat.card) - median(lat.event))} ms for the page; p90 ${f(p90(lat.card))} ms`, 'p50 ≤ 150 ms'],
    ...QUERIES.map(([name]) => [
      `Activity query over ${JOURNAL_ENTRIES.toLocaleString('en')} entries: ${name} (ms, median)`,
      `${f(act.inProcess[name], 2)} (store, in-process)`,
      f(act.overHttp[name], 2),
      `+${f(act.overHttp[name] - act.inProcess[name], 2)} ms for HTTP and checks`,
      '≤ 100 ms',
    ]),
    [`Activity page opened to first rows drawn (ms, median)`, '–', f(act.drawn), 'in Chromium, same journal', '≤ 100 ms'],
    ['renderer JavaScript, gzipped (KB)', '–', f(size.jsGz / 1024), `${f(size.jsRaw / 1024)} KB raw; CSS ${f(size.cssGz / 1024)} KB gzipped`, '≤ 150 KB'],
  ];
  return rows;
}

export function uiTable(rows) {
  return ['| UI measure | baseline | airlock | comparison | target |', '|---|---|---|---|---|', ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(uiTable(await uiRows(process.argv.includes('--quick'))) + '\n');
}
