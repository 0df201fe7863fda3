// The README's screenshot (docs/screenshot.png): the built playground at 1366x768 with a few
// messages, one locked, one dead-lettered, the map and the inspector. Run after
// ./scripts/build-ui.sh: node tests/e2e/screenshot.mjs
import { chromium } from 'playwright-core';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve, CHROMIUM_ARGS } from './serve.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { server, url } = await serve(path.resolve(here, '../../dist'));
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: CHROMIUM_ARGS });
const page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
await page.goto(url + '?lang=en');
await page.waitForSelector('.clock');
await page.click('#open-sandbox');
await page.goto(url + '?lang=en&preset=lapsed-locks-to-dlq');
await page.locator('.lane').first().waitFor();
for (let i = 0; i < 11; i++) await page.click('#step-1s');
await page.locator('.card .card-body').first().click();
await page.evaluate(() => window.scrollTo(0, 0));
await page.waitForTimeout(300);
await page.screenshot({ path: path.resolve(here, '../../docs/screenshot.png') });
await browser.close();
server.close();
console.log('docs/screenshot.png written');
