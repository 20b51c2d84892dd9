// Customers' files on the staff page in headless Chromium (Debian's), driven by
// playwright-core against the real dispatchd that media_test.py started: one escalation per
// file. Prints one pass/FAIL line per check; exit 1 when any failed.
//
// Environment (set by media_test.py):
//   STAFF_URL              http://127.0.0.1:PORT
//   STAFF_A, STAFF_A_TOKEN the account (ana)
//   CASES, MEDIA           {png, wav, pdf, svg_png, svg, html, gone}: escalation ids, media ids
//   CSP                    the page's Content-Security-Policy as docs/staff.md states it
//   SCREENSHOTS, CHROMIUM
import {join} from 'node:path';
import {base, check, finish, launch, laptop, login, phone, shot, timeout, watchedPage} from './browser_support.mjs';

const env = process.env;
const cases = JSON.parse(env.CASES);
const media = JSON.parse(env.MEDIA);

// Every securitypolicyviolation the page sees, kept for the end.
const recordViolations = () => {
  window.__violations = [];
  document.addEventListener('securitypolicyviolation',
      (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
};

async function openCase(page, name) {
  await page.goto(`${base}#/escalations/${cases[name]}`);
  await page.locator('#case-title').waitFor();
  await page.locator(`#files li[data-media-id="${media[name]}"]`).waitFor();
  return page.locator(`#files li[data-media-id="${media[name]}"]`);
}

// The answer to GET /api/media/{id} from the page (its cookie only): status and headers.
function fetchFromPage(page, id, credentials = 'same-origin') {
  return page.evaluate(async ([id, credentials]) => {
    const r = await fetch(`/api/media/${id}`, {credentials});
    return {status: r.status, type: r.headers.get('content-type'), disposition: r.headers.get('content-disposition'),
      nosniff: r.headers.get('x-content-type-options')};
  }, [id, credentials]);
}

async function imageShown(page, context) {
  const item = await openCase(page, 'png');
  const img = item.locator('img');
  check('the photo is an <img> from /api/media', await img.getAttribute('src') === `/api/media/${media.png}`);
  await page.waitForFunction((el) => el.complete, await img.elementHandle(), {timeout});
  const size = await img.evaluate((el) => [el.naturalWidth, el.naturalHeight]);
  check('the photo is shown: its natural size is the PNG\'s (64 x 48)', size[0] === 64 && size[1] === 48, size);
  const box = await img.boundingBox();
  check('the photo is sized to at most 320 x 240', box && box.width <= 320 && box.height <= 240, JSON.stringify(box));
  const facts = await item.innerText();
  check('the photo says its type and size', facts.includes('image/png') && /[\d.]+ (bytes|KB)/.test(facts), facts);
  await shot(page, 'media-image-1366');
  await page.locator('#files').screenshot({path: join(env.SCREENSHOTS, 'media-files-1366.png')});
  // A click opens the full size in a tab of its own.
  const [popup] = await Promise.all([context.waitForEvent('page'), img.click()]);
  await popup.waitForLoadState();
  check('a click opens the photo full size', popup.url().endsWith(`/api/media/${media.png}`), popup.url());
  await popup.close();
  const refused = await fetchFromPage(page, media.png, 'omit');
  check('without the session cookie the file is refused (401)', refused.status === 401, JSON.stringify(refused));
  const inline = await fetchFromPage(page, media.png);
  check('the photo is served inline as image/png with nosniff', inline.status === 200 && inline.type === 'image/png' &&
      inline.disposition.startsWith('inline;') && inline.nosniff === 'nosniff', JSON.stringify(inline));
}

async function audioPlays(page) {
  const item = await openCase(page, 'wav');
  const audio = item.locator('audio');
  check('the WAV has a player', await audio.count() === 1 && await audio.getAttribute('controls') !== null);
  // Chromium lets a page play sound once someone has clicked in it (the sign-in did).
  const played = await audio.evaluate(async (el) => {
    const ended = new Promise((resolve) => el.addEventListener('ended', () => resolve(true), {once: true}));
    try {
      await el.play();
    } catch (error) {
      return {played: false, error: String(error), mediaError: el.error && el.error.code};
    }
    const moved = await Promise.race([ended, new Promise((resolve) => {
      const poll = setInterval(() => {
        if (el.currentTime > 0) {
          clearInterval(poll);
          resolve(true);
        }
      }, 20);
    }), new Promise((resolve) => setTimeout(() => resolve(false), 5000))]);
    return {played: true, moved, currentTime: el.currentTime, duration: el.duration, error: el.error && el.error.code};
  });
  check('the WAV plays: play() resolves and the clip moves on', played.played && played.moved && !played.error,
      JSON.stringify(played));
  check('the WAV is the 0.6 s clip', Math.abs((played.duration ?? 0) - 0.6) < 0.05, JSON.stringify(played));
  await shot(page, 'media-audio-1366');
}

// A file the page must offer as a download and never render: a link, no <img>, answered as
// an attachment; following it downloads and runs nothing.
async function downloadOnly(page, context, name, what) {
  const item = await openCase(page, name);
  check(`${what}: no <img>, <audio> or frame for it`,
      await item.locator('img, audio, video, iframe, object, embed').count() === 0);
  const link = item.locator('a.file-download');
  check(`${what}: a download link`, await link.count() === 1 && await link.getAttribute('download') !== null &&
      await link.getAttribute('href') === `/api/media/${media[name]}`);
  const answer = await fetchFromPage(page, media[name]);
  check(`${what}: served as an attachment with nosniff`, answer.status === 200 &&
      answer.disposition.startsWith('attachment;') && answer.nosniff === 'nosniff', JSON.stringify(answer));
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  check(`${what}: the link downloads it`, download.suggestedFilename().length > 0, download.suggestedFilename());
  await download.cancel().catch(() => {});
  // Opened directly in a tab of its own: downloaded, never rendered (a dialog would fail the run).
  const tab = await watchedPage(context, `${what} opened directly`);
  const [direct] = await Promise.all([tab.waitForEvent('download'),
    tab.goto(`${env.STAFF_URL}/api/media/${media[name]}`).catch(() => null)]);
  check(`${what}: opened directly, it is downloaded`, Boolean(direct));
  await direct.cancel().catch(() => {});
  await tab.close();
  return item;
}

async function main() {
  const browser = await launch();
  try {
    const context = await browser.newContext({viewport: laptop, acceptDownloads: true});
    await context.addInitScript(recordViolations);
    const page = await watchedPage(context, 'case');
    const first = await page.goto(base);
    check('the page\'s CSP is the documented one', first.headers()['content-security-policy'] === env.CSP,
        `${first.headers()['content-security-policy']} vs ${env.CSP}`);
    await login(page, env.STAFF_A, env.STAFF_A_TOKEN);

    await imageShown(page, context);
    await audioPlays(page);
    const pdf = await downloadOnly(page, context, 'pdf', 'the PDF');
    const pdfText = await pdf.innerText();
    check('the PDF shows its name, type and size', pdfText.includes('factura.pdf') &&
        pdfText.includes('application/pdf') && /\d+ bytes/.test(pdfText), pdfText);
    const svg = await downloadOnly(page, context, 'svg_png', 'an SVG declared image/png');
    const svgText = await svg.innerText();
    check('the SVG declared image/png says its bytes are SVG', svgText.includes('image/svg+xml'), svgText);
    await shot(page, 'media-svg-1366');
    // The message's trail lists the file with both types, its size and sha256.
    await page.locator('#trail-link').click();
    const files = page.locator('section[aria-labelledby="trail-files"]');
    await files.locator('tbody tr').first().waitFor();
    const row = await files.locator('tbody tr').first().innerText();
    check('the trail lists the file: declared image/png, sniffed SVG, its size and sha256',
        row.includes('image/png') && row.includes('image/svg+xml (not the declared type)') && /\b[0-9a-f]{64}\b/.test(row) &&
        row.includes('stored'), row);
    await downloadOnly(page, context, 'svg', 'an SVG declared image/svg+xml');
    await downloadOnly(page, context, 'html', 'an HTML page declared image/jpeg');

    const gone = await openCase(page, 'gone');
    const goneText = await gone.innerText();
    check('a file not kept says why: expired', /expired/.test(goneText) && await gone.locator('img, a').count() === 0,
        goneText);

    const seen = await page.evaluate(() => window.__violations);
    check('no securitypolicyviolation event', seen.length === 0, JSON.stringify(seen));
    // The listener does see one: audio from a data: URL is not the page's own (on a page of
    // its own: the watched one fails the run on the console's "Refused to load").
    const probe = await context.newPage();
    await probe.goto(base);
    const made = await probe.evaluate(() => new Promise((resolve) => {
      document.addEventListener('securitypolicyviolation', (e) => resolve(e.effectiveDirective), {once: true});
      const audio = document.createElement('audio');
      audio.src = 'data:audio/wav;base64,UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=';
      document.body.append(audio);
      setTimeout(() => resolve(null), 3000);
    }));
    check('a violation made on purpose is seen (media-src holds)', made === 'media-src', made);
    await probe.close();

    // The photo fits a phone's width.
    const small = await watchedPage(await browser.newContext({viewport: phone}), 'phone');
    await login(small, env.STAFF_A, env.STAFF_A_TOKEN);
    await openCase(small, 'png');
    const width = await small.evaluate(() => document.documentElement.scrollWidth);
    check('the case with its photo fits 375 px', width <= 375, width);
    await shot(small, 'media-image-375');
  } finally {
    await browser.close();
  }
}

await finish(main);
