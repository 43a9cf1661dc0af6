#!/usr/bin/env node
// Draws Airlock's icons (the app icon and one tray icon per state) and writes them as PNG next to this file.
// Run it after changing a shape: `node build/icons/generate.mjs`. The PNGs are committed, so neither a build nor
// a test needs it; it uses node:zlib only, so it adds no dependency.
//
// Shapes are signed distance functions in a unit square (x right, y down); a pixel's coverage is its distance
// to the edge in pixels, clamped, which gives anti-aliased edges at any size.
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

const HERE = dirname(fileURLToPath(import.meta.url));

// ---- shapes -------------------------------------------------------------------------------------------------

const circle = (cx, cy, r) => (x, y) => Math.hypot(x - cx, y - cy) - r;
const ring = (cx, cy, r, width) => (x, y) => Math.abs(Math.hypot(x - cx, y - cy) - r) - width / 2;
const box = (cx, cy, hw, hh, round = 0) => (x, y) => {
  const dx = Math.abs(x - cx) - hw + round;
  const dy = Math.abs(y - cy) - hh + round;
  return Math.hypot(Math.max(dx, 0), Math.max(dy, 0)) + Math.min(Math.max(dx, dy), 0) - round;
};
/** A regular octagon (a stop sign) of circumradius-ish `r`, flat sides up and down. */
const octagon = (cx, cy, r) => (x, y) => {
  const k = [-0.9238795325, 0.3826834323, 0.4142135623];
  let px = Math.abs(x - cx);
  let py = Math.abs(y - cy);
  let d = 2 * Math.min(k[0] * px + k[1] * py, 0);
  px -= d * k[0];
  py -= d * k[1];
  d = 2 * Math.min(-k[0] * px + k[1] * py, 0);
  px += d * k[0];
  py -= d * k[1];
  px -= Math.min(Math.max(px, -k[2] * r), k[2] * r);
  py -= r;
  return Math.hypot(px, py) * Math.sign(py);
};
const union = (...fs) => (x, y) => Math.min(...fs.map((f) => f(x, y)));
const minus = (a, b) => (x, y) => Math.max(a(x, y), -b(x, y));

// The glyph: an airlock hatch (a ring with a bar across, its handle) and what each state adds to it.
const hatch = union(ring(0.5, 0.5, 0.36, 0.13), box(0.5, 0.5, 0.2, 0.065, 0.03));
const badge = circle(0.8, 0.2, 0.17);
const GLYPHS = {
  idle: [{ shape: hatch, color: [0x4b, 0x55, 0x63] }],
  // the hatch with a dot in its corner: something waits for you
  pending: [
    { shape: minus(hatch, circle(0.8, 0.2, 0.25)), color: [0x4b, 0x55, 0x63] },
    { shape: badge, color: [0xf5, 0x9e, 0x0b] },
  ],
  // a stop sign with a bar cut out of it
  estop: [{ shape: minus(octagon(0.5, 0.5, 0.46), box(0.5, 0.5, 0.27, 0.075, 0.03)), color: [0xdc, 0x26, 0x26] }],
  // the hatch broken by an exclamation mark: the broker cannot be reached
  problem: [
    { shape: minus(ring(0.5, 0.5, 0.36, 0.13), box(0.5, 0.5, 0.13, 0.6)), color: [0x4b, 0x55, 0x63] },
    { shape: union(box(0.5, 0.41, 0.065, 0.22, 0.04), circle(0.5, 0.79, 0.075)), color: [0xea, 0x58, 0x0c] },
  ],
};

// ---- raster and PNG -----------------------------------------------------------------------------------------

/** RGBA pixels of `layers` drawn over transparency; `template` draws every layer black (macOS tints it). */
function render(size, layers, { template = false, background = null } = {}) {
  const px = Buffer.alloc(size * size * 4);
  const pixel = 1 / size;
  for (let j = 0; j < size; j++) {
    for (let i = 0; i < size; i++) {
      const x = (i + 0.5) * pixel;
      const y = (j + 0.5) * pixel;
      let [r, g, b, a] = [0, 0, 0, 0];
      const all = background ? [background, ...layers] : layers;
      for (const layer of all) {
        const cover = Math.min(1, Math.max(0, 0.5 - layer.shape(x, y) / pixel));
        if (cover === 0) continue;
        const [lr, lg, lb] = template ? [0, 0, 0] : layer.color;
        // "over" compositing, straight alpha
        const na = cover + a * (1 - cover);
        r = (lr * cover + r * a * (1 - cover)) / na;
        g = (lg * cover + g * a * (1 - cover)) / na;
        b = (lb * cover + b * a * (1 - cover)) / na;
        a = na;
      }
      const o = (j * size + i) * 4;
      px[o] = Math.round(r);
      px[o + 1] = Math.round(g);
      px[o + 2] = Math.round(b);
      px[o + 3] = Math.round(a * 255);
    }
  }
  return px;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf) {
  let c = 0xffffffff;
  for (const byte of buf) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A PNG (8-bit RGBA, no filtering) of square RGBA pixels. */
export function png(size, rgba) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  const rows = Buffer.alloc(size * (size * 4 + 1));
  for (let j = 0; j < size; j++) rgba.copy(rows, j * (size * 4 + 1) + 1, j * size * 4, (j + 1) * size * 4);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(rows, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}

// ---- what is written ----------------------------------------------------------------------------------------

/** Tray icons: 16 px and `@2x`; colour for Windows and Linux, `*Template` (black + alpha) for the macOS menu bar. */
function writeTray() {
  const dir = join(HERE, 'tray');
  mkdirSync(dir, { recursive: true });
  for (const [state, layers] of Object.entries(GLYPHS)) {
    for (const [suffix, size] of [['', 16], ['@2x', 32]]) {
      writeFileSync(join(dir, `${state}${suffix}.png`), png(size, render(size, layers)));
      writeFileSync(join(dir, `${state}Template${suffix}.png`), png(size, render(size, layers, { template: true })));
    }
  }
}

/** The app icon electron-builder turns into .icns / .ico: the hatch in white on a rounded blue square. */
function writeAppIcon() {
  const size = 1024;
  const background = { shape: box(0.5, 0.5, 0.41, 0.41, 0.09), color: [0x1d, 0x4e, 0xd8] };
  const glyph = [{ shape: (x, y) => hatch(0.5 + (x - 0.5) / 0.62, 0.5 + (y - 0.5) / 0.62) * 0.62, color: [0xff, 0xff, 0xff] }];
  writeFileSync(join(HERE, 'icon.png'), png(size, render(size, glyph, { background })));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeTray();
  writeAppIcon();
}
