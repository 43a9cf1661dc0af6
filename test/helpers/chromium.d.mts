import type { BrowserContext } from 'playwright-core';

export const CHROMIUM_FLAGS: string[];
export function chromiumPath(): string;
export function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }>;
export function uiUrlFrom(stderr: string): URL | null;
export function signIn(url: URL | string): Promise<string>;
