import { describe, expect, it } from 'vitest';
import { LastNumberText, numberText } from '../../../proxy-core/src/util/number-text.js';

describe('numberText', () => {
  it('writes the digits String(n) writes for every finite number', () => {
    const numbers = [0, -0, 1, -1, 42, 2 ** 31, 2 ** 53 - 1, -(2 ** 53), 0.1 + 0.2, 1e21, 1e-7, 123e-20, 5e-324, Number.MAX_VALUE, 1796568440563.123, -3.5];
    for (const n of numbers) expect(numberText(n), String(n)).toBe(String(n));
  });

  it('writes null for what JSON cannot hold', () => {
    for (const n of [NaN, Infinity, -Infinity]) expect(numberText(n)).toBe('null');
  });

  it('reads back as the same number', () => {
    for (let i = 0; i < 1000; i++) {
      const n = (Math.random() - 0.5) * 10 ** Math.floor(Math.random() * 40 - 20);
      expect(JSON.parse(numberText(n))).toBe(n);
    }
  });
});

describe('LastNumberText', () => {
  it('writes each number as numberText does, again only when it changes', () => {
    const last = new LastNumberText();
    const seq = [1796568440563, 1796568440563, 1796568440564, 0, -0, 0.5, 0.5, NaN, NaN, Infinity, 1796568440563];
    for (const n of seq) expect(last.of(n)).toBe(numberText(n));
  });

  it('gives back the same text while the number stays the same', () => {
    const last = new LastNumberText();
    const first = last.of(1796568440563.25);
    expect(last.of(1796568440563.25)).toBe(first);
    expect(last.of(1796568440564)).toBe('1796568440564');
  });
});
