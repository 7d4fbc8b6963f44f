// Drives examples/webchat's page in a real, headless Chromium (installed
// from the system's packages; never downloaded) as a person would: type a
// question, see the reasoning and the answer stream in, see the tool call
// while it runs, approve the call the agent asks about, see the run finish;
// then ask again in the same chat and reject the call.
//
//   CHROMIUM=/usr/bin/chromium SHOTS=/tmp/dir node webchat-browser.mjs URL
//
// Run by examples/webchat's TestBrowser. On failure it saves a screenshot
// and the page's HTML in SHOTS and exits 1.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const url = process.argv[2];
const shots = process.env.SHOTS || tmpdir();
const profile = mkdtempSync(join(tmpdir(), 'webchat-chromium-'));
const timeout = 20000;

const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
  ],
});
const page = context.pages()[0] ?? (await context.newPage());
const log = [];
page.on('console', (m) => log.push(`console.${m.type()}: ${m.text()}`));
page.on('pageerror', (e) => log.push(`pageerror: ${e.message}`));

const step = async (what, f) => {
  try {
    return await f();
  } catch (e) {
    throw new Error(`${what}: ${e.message}`);
  }
};

let failed = false;
try {
  await step('open the page', () => page.goto(url, { waitUntil: 'load', timeout }));
  await step('see the prompt', () => page.waitForSelector('#prompt:not([disabled])', { timeout }));
  // Record the answer's text as it grows, to see it stream in.
  await page.evaluate(() => {
    window.__lengths = [];
    new MutationObserver(() => {
      const texts = document.querySelectorAll('.message.assistant .text');
      const last = texts[texts.length - 1];
      if (last) window.__lengths.push(last.textContent.length);
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  await page.fill('#prompt', 'What is the weather in Tokyo?');
  await page.click('#send');

  await step('see the question', () => page.waitForSelector('.message.user >> text=What is the weather in Tokyo?', { timeout }));
  await step('see the reasoning', () => page.waitForSelector('.message.assistant .reasoning', { timeout }));
  await step('see get_weather while it runs', () =>
    page.waitForSelector('.tool[data-tool="get_weather"][data-state="input-available"]', { timeout }));
  // The test's server holds get_weather until asked (TestBrowser), so the
  // step above cannot miss it; a server without the route answers 404.
  await step('let get_weather finish', () => fetch(new URL('/test/release-weather', url), { method: 'POST' }));
  await step('see get_weather finish', () =>
    page.waitForSelector('.tool[data-tool="get_weather"][data-state="output-available"] >> text=Tokyo: sunny', { timeout }));
  await step('see the approval button', () =>
    page.waitForSelector('.tool[data-tool="save_note"][data-state="approval-requested"] button.approve', { timeout }));
  const streamed = await page.evaluate(() => new Set(window.__lengths.filter((n) => n > 0)).size);
  if (streamed < 3) throw new Error(`the answer did not stream in: ${streamed} distinct lengths`);
  await page.click('.tool[data-tool="save_note"] button.approve');
  await step('see save_note run after the approval', () =>
    page.waitForSelector('.tool[data-tool="save_note"][data-state="output-available"] >> text=saved', { timeout }));
  await step('see the final answer', () => page.waitForSelector('.message.assistant .text >> text=the note is saved', { timeout }));
  await step('see the chat ready again', () => page.waitForSelector('#status[data-status="ready"]', { timeout }));

  // A second question in the same chat (its history goes back with it,
  // tool calls and the approval included); this time reject the call.
  await page.fill('#prompt', 'And in London?');
  await page.click('#send');
  await step('see get_weather for London', () =>
    page.waitForSelector('.tool[data-tool="get_weather"][data-state="output-available"] >> text=London: sunny', { timeout }));
  await step('see the second approval button', () =>
    page.waitForSelector('.tool[data-tool="save_note"][data-state="approval-requested"] button.reject', { timeout }));
  await page.click('.tool[data-tool="save_note"][data-state="approval-requested"] button.reject');
  await step('see the call rejected', () => page.waitForSelector('.tool[data-tool="save_note"][data-state="output-denied"]', { timeout }));
  await step('see the answer to the rejection', () =>
    page.waitForSelector('.message.assistant .text >> text=I did not save the note', { timeout }));
  await step('see the chat ready at the end', () => page.waitForSelector('#status[data-status="ready"]', { timeout }));
  const errors = log.filter((l) => l.startsWith('pageerror') || l.startsWith('console.error'));
  if (errors.length) throw new Error('the page logged errors:\n' + errors.join('\n'));
  console.log(JSON.stringify({ ok: true, streamedLengths: streamed }));
} catch (e) {
  failed = true;
  const shot = join(shots, 'webchat-failure.png');
  try {
    await page.screenshot({ path: shot, fullPage: true });
    writeFileSync(join(shots, 'webchat-failure.html'), await page.content());
  } catch {}
  console.error(`webchat-browser: ${e.message}\nscreenshot: ${shot}\n${log.join('\n')}`);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
