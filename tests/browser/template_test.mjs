// A template sent from the staff page in headless Chromium (Debian's), driven by
// playwright-core against the real dispatchd that template_test.py started: a window_closed
// case whose customer last wrote 25 hours ago. Prints one pass/FAIL line per check; exit 1
// when any failed.
//
// Environment (set by template_test.py):
//   STAFF_URL              http://127.0.0.1:PORT
//   STAFF_A, STAFF_A_TOKEN the account (ana)
//   CASE_ID, CASE_SENDER   the window_closed case and its customer
//   SCREENSHOTS, CHROMIUM
import {base, check, finish, fromPage, launch, laptop, login, phone, shot, textBecomes, watchedPage} from
  './browser_support.mjs';

const env = process.env;

async function openCase(page) {
  await page.goto(`${base}#/escalations/${env.CASE_ID}`);
  await page.locator('#reply-window').waitFor();
}

async function main() {
  const browser = await launch();
  try {
    const context = await browser.newContext({viewport: laptop});
    const page = await watchedPage(context, 'case');
    await login(page, env.STAFF_A, env.STAFF_A_TOKEN);
    await openCase(page);

    const line = await page.locator('#reply-window').innerText();
    check('the panel says the reply window is closed', /^Reply window closed since .+: only an approved template/
        .test(line), line);
    check('the reply box and its button are off', await page.locator('#reply-text').isDisabled() &&
        await page.getByRole('button', {name: 'Send reply'}).isDisabled());
    check('no "Approve as proposed" for a free-form proposal', (await page.locator('#approve').count()) === 0);
    const chosen = await page.locator('.action-form select').first().inputValue();
    check('the form starts on the approved template action', chosen === 'order_update', chosen);
    const note = await textBecomes(page.locator('#template-note'), (t) => t.includes('order_update'),
        'the template note');
    check('the form shows the template, approved, with its text and parameters',
        note.includes('Template order_update (en_US): approved') && note.includes('body: ') &&
        note.includes('{{1}} ← customer_name'), note);
    const [status, body] = await fromPage(page, 'POST', `/api/escalations/${env.CASE_ID}/reply`,
        {text: 'Hello again, still there?'});
    check('the API refuses a typed reply while the window is closed', status === 409 &&
        /reply window is closed/.test(body.error), JSON.stringify([status, body]));
    // The model's raw output (shown with the attempts) has nulls of its own: the panel has none.
    const panel = await page.locator('section.decide').innerText();
    check('the panel shows no null/undefined', !/\b(null|undefined|NaN)\b/.test(panel), panel);
    await shot(page, 'template-case-1366');

    // The same case fits a phone's width.
    const small = await watchedPage(await browser.newContext({viewport: phone}), 'phone');
    await login(small, env.STAFF_A, env.STAFF_A_TOKEN);
    await openCase(small);
    const width = await small.evaluate(() => document.documentElement.scrollWidth);
    check('the case fits 375 px', width <= 375, width);
    await shot(small, 'template-case-375');

    // A value breaking the field's pattern is refused at its field; then the template goes.
    const recipient = await page.getByLabel('recipient').inputValue();
    check('the recipient is the customer', recipient === env.CASE_SENDER, recipient);
    await page.getByLabel('customer_name').fill('Ana');
    await page.getByLabel('order_number').fill('5667 01');
    await page.locator('#edit-approve').click();
    const refused = await textBecomes(page.locator('[data-field="order_number"] .field-error'), (t) => t !== '',
        'the refusal at order_number');
    check('a pattern-breaking order number is refused at its field', refused !== '', refused);
    await page.getByLabel('order_number').fill('566701');
    await shot(page, 'template-filled-1366');
    await page.locator('#edit-approve').click();
    await page.waitForURL((url) => url.hash === '#/');
    const status2 = await textBecomes(page.locator('#status'), (t) => t.includes(`#${env.CASE_ID}`), 'the status');
    check('the page says the case was edited and approved', status2.includes('edited and approved'), status2);
  } finally {
    await browser.close();
  }
}

await finish(main);
