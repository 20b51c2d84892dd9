// What the browser scripts (staff_test.mjs, desk_test.mjs) share: one pass/FAIL line per
// check, questions to the Python driver, waiting for a text, pages that fail the run on a
// dialog, script error or CSP violation, signing in, screenshots.
import {mkdirSync} from 'node:fs';
import {join} from 'node:path';
import {createInterface} from 'node:readline';
import {chromium} from 'playwright-core';

const env = process.env;
export const base = `${env.STAFF_URL}/staff/`;
export const laptop = {width: 1366, height: 850};
export const phone = {width: 375, height: 812};
export const timeout = 15000;
let failures = 0;

export function check(name, condition, detail = '') {
  if (!condition) failures++;
  console.log(`${condition ? 'pass' : 'FAIL'} ${name}${condition ? '' : `: ${detail}`}`);
}

// Asks the driver (the test's .py) to do something to the stack: a line "@@command" out,
// one line of JSON back on stdin.
let answers = null;
export async function ask(command) {
  answers ??= createInterface({input: process.stdin})[Symbol.asyncIterator]();
  console.log(`@@${command}`);
  const {value, done} = await answers.next();
  if (done) throw new Error(`no answer to ${command}`);
  return JSON.parse(value);
}

// Waits for `locator` to be visible and then for `predicate(text)` to hold, up to `wait` ms.
export async function textBecomes(locator, predicate, what, wait = timeout) {
  const deadline = Date.now() + wait;
  let last = '';
  while (Date.now() < deadline) {
    // An element not (yet) there never satisfies the predicate: "(missing)" is only reported.
    const present = (await locator.count()) > 0;
    last = present ? await locator.first().innerText() : '(missing)';
    if (present && predicate(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what}: still ${JSON.stringify(last)}`);
}

// A page that fails the run on any dialog (an injected alert()), script error or CSP
// violation (something inline the page should not have).
export async function watchedPage(context, label) {
  const page = await context.newPage();
  page.setDefaultTimeout(timeout);
  page.on('dialog', async (dialog) => {
    check(`${label}: no dialog opens`, false, `${dialog.type()} ${JSON.stringify(dialog.message())}`);
    await dialog.dismiss();
  });
  page.on('pageerror', (error) => check(`${label}: no script error`, false, error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Refused to/i.test(message.text())) {
      check(`${label}: no CSP violation`, false, message.text());
    }
  });
  return page;
}

export async function login(page, name, token) {
  await page.goto(base);
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('Personal token').fill(token);
  await page.getByRole('button', {name: 'Sign in'}).click();
  await page.locator('#who', {hasText: name}).waitFor();
}

// A staff API call from the page's own session (its cookie and CSRF token): [status, body].
export function fromPage(page, method, path, body) {
  return page.evaluate(async ([method, path, body]) => {
    const session = await (await fetch('/api/session')).json();
    const response = await fetch(path, {method, body: JSON.stringify(body),
      headers: {'Content-Type': 'application/json', 'X-CSRF-Token': session.csrf}});
    return [response.status, await response.json()];
  }, [method, path, body]);
}

// No "null" or "undefined" leaked into the page from a missing value.
export async function noStrayText(page, where) {
  const text = await page.locator('body').innerText();
  const stray = /\b(null|undefined|NaN|\[object Object\])\b/.exec(text);
  check(`${where}: no null/undefined shown`, !stray, stray && text.slice(Math.max(0, stray.index - 80), stray.index + 20));
}

// Debian's chromium (CHROMIUM, default /usr/bin/chromium), never a downloaded one; the
// screenshots' folder made.
export function launch() {
  mkdirSync(env.SCREENSHOTS, {recursive: true});
  return chromium.launch({executablePath: env.CHROMIUM || '/usr/bin/chromium'});
}

export const shot = (page, name) => page.screenshot({path: join(env.SCREENSHOTS, `${name}.png`), fullPage: true});

// Two browser contexts at laptop width: two sessions that share nothing.
export const twoSessions = (browser) => Promise.all([browser.newContext({viewport: laptop}),
  browser.newContext({viewport: laptop})]);

// Runs `main`, a failure when it throws; prints the count and exits 1 when any check failed.
export async function finish(main) {
  try {
    await main();
  } catch (error) {
    check('the browser run finished', false, error.stack ?? String(error));
  }
  console.log(`browser: ${failures} failed`);
  process.exit(failures ? 1 : 0);
}
