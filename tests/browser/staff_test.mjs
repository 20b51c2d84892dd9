// The staff page in headless Chromium (Debian's, never a downloaded one), driven by
// playwright-core against the real dispatchd that staff_test.py started. Prints one
// pass/FAIL line per check; exit 1 when any failed.
//
// Environment (set by staff_test.py):
//   STAFF_URL            http://127.0.0.1:PORT
//   STAFF_A, STAFF_A_TOKEN, STAFF_B, STAFF_B_TOKEN   two accounts
//   CASE_ID, CASE_SENDER the escalation of the model that failed three times, its customer
//   CASE_ATTEMPTS        its attempts as stored: [{"raw": output, "paths": [error pointers]}]
//   XSS_ID, XSS_TEXT     the escalation whose message holds <script> and <img onerror>
//   REPLY_TEXT           what staff A writes in the edited action (the driver checks Graph)
//   SCREENSHOTS          a folder for the PNGs
//   CHROMIUM             the browser (default /usr/bin/chromium)
import {
  ask, base, check, finish, laptop, launch, login, noStrayText, phone, shot, textBecomes, twoSessions, watchedPage,
} from './browser_support.mjs';

const env = process.env;

async function main() {
  const browser = await launch();
  try {
    const [contextA, contextB] = await twoSessions(browser);
    const a = await watchedPage(contextA, 'A');

    // Login: a wrong token is refused on the form, the right one opens the queue.
    await a.goto(base);
    await a.getByLabel('Name').fill(env.STAFF_A);
    await a.getByLabel('Personal token').fill('not-the-token');
    await a.getByRole('button', {name: 'Sign in'}).click();
    const refused = await textBecomes(a.locator('#login-error'), (t) => t.length > 0, 'login error');
    check('a wrong token is refused on the login form', /do not match/.test(refused), refused);
    await shot(a, 'login-1366');
    await login(a, env.STAFF_A, env.STAFF_A_TOKEN);
    const caseRow = a.locator(`#queue-rows tr[data-id="${env.CASE_ID}"]`);
    await caseRow.waitFor();
    const rowText = await caseRow.innerText();
    check('the queue lists the escalation with reason, channel, sender and age',
        rowText.includes('contract failed') && rowText.includes('WhatsApp') && rowText.includes(env.CASE_SENDER) &&
        /just now|min/.test(rowText), rowText);
    const counts = await a.locator('#counts').innerText();
    check('the queue counts items per reason', /contract failed\s*2/.test(counts), counts);
    const xssCell = a.locator(`#queue-rows tr[data-id="${env.XSS_ID}"] td.text`);
    check('the queue shows the script message as text', (await xssCell.innerText()) === env.XSS_TEXT.split('\n')[0],
        await xssCell.innerText());
    await noStrayText(a, 'queue');
    await shot(a, 'queue-1366');

    // Staff B logs in with the keyboard only and watches the queue and the case.
    const bQueue = await watchedPage(contextB, 'B');
    await bQueue.goto(base);
    await bQueue.locator('#login-name:focus').waitFor();
    await bQueue.keyboard.type(env.STAFF_B);
    await bQueue.keyboard.press('Tab');
    await bQueue.keyboard.type(env.STAFF_B_TOKEN);
    await bQueue.keyboard.press('Enter');
    await bQueue.locator('#who', {hasText: env.STAFF_B}).waitFor();
    check('staff B signs in with the keyboard alone', true);
    await bQueue.locator(`#queue-rows tr[data-id="${env.CASE_ID}"]`).waitFor();
    const bCase = await watchedPage(contextB, 'B case');
    await bCase.goto(`${base}#/escalations/${env.CASE_ID}`);
    await bCase.locator('.holder-line', {hasText: 'Open'}).waitFor();
    await bQueue.locator('#live[data-state="live"]').waitFor();
    await bCase.locator('#live[data-state="live"]').waitFor();
    for (const page of [bQueue, bCase]) await page.evaluate(() => { window.notReloaded = true; });

    // The case: three attempts with their errors at their pointers.
    await a.goto(`${base}#/escalations/${env.CASE_ID}`);
    await a.locator('.attempt').first().waitFor();
    const attempts = a.locator('.attempt');
    check('the case shows the three attempts', (await attempts.count()) === 3, await attempts.count());
    for (let i = 0; i < 3; i++) {
      const errors = await attempts.nth(i).locator('.errors li').count();
      check(`attempt ${i + 1} shows its validator errors`, errors > 0, errors);
    }
    const stored = JSON.parse(env.CASE_ATTEMPTS);
    for (const [i, attempt] of stored.entries()) {
      const card = attempts.nth(i);
      const raw = await card.locator('pre.raw').innerText();
      const pointers = await card.locator('.errors .pointer').allInnerTexts();
      const want = attempt.paths.map((p) => p || '(whole reply)');
      check(`attempt ${i + 1} shows its raw output and each error's pointer`,
          raw === attempt.raw && pointers.join(' ') === want.join(' '), [raw, pointers, attempt]);
    }
    const thread = await a.locator('.conversation').innerText();
    check('the conversation shows the customer message', thread.includes('factura'), thread);
    await noStrayText(a, 'case');
    await shot(a, 'case-1366');

    // A claims; B sees it in the queue and the open case without reloading.
    await a.getByRole('button', {name: 'Claim'}).click();
    await textBecomes(a.locator('.holder-line'), (t) => t.includes(`Claimed by ${env.STAFF_A} (you)`), 'A holds');
    check('A holds the item after Claim', true);
    const bSees = await textBecomes(bCase.locator('.holder-line'), (t) => t.includes(`Claimed by ${env.STAFF_A}`),
        "B's case").catch((e) => e.message);
    check("B's open case shows A's claim without reload", bSees.startsWith('Claimed by'), bSees);
    const bRow = await textBecomes(bQueue.locator(`#queue-rows tr[data-id="${env.CASE_ID}"] td.holder`),
        (t) => t.includes(`Claimed by ${env.STAFF_A}`), "B's queue").catch((e) => e.message);
    check("B's queue shows A's claim without reload", bRow.startsWith('Claimed by'), bRow);
    for (const [page, label] of [[bQueue, 'queue'], [bCase, 'case']]) {
      check(`B's ${label} page was not reloaded`, await page.evaluate(() => window.notReloaded === true));
    }

    // An invalid priority (past the select, which only offers the catalog's enum) is
    // refused by the validator, its message next to the field.
    // The form: prefilled from the last attempt's output, limits and requirements from the catalog.
    const contenido = a.getByLabel('contenido');
    const last = JSON.parse(stored[stored.length - 1].raw);
    const prefilled = [await a.getByLabel('destinatario').inputValue(), await contenido.inputValue()];
    const expected = [last.destinatario ?? env.CASE_SENDER, last.contenido ?? ''];
    check("the form is prefilled from the last attempt's output", prefilled.join('|') === expected.join('|'),
        [prefilled, expected]);
    const limits = await contenido.evaluate((e) => [e.required, e.minLength, e.maxLength]);
    check('contenido is required with the catalog lengths', limits.join(',') === 'true,1,4096', limits);
    await contenido.fill(env.REPLY_TEXT);
    const priority = a.locator('[data-field="prioridad"] select');
    const offered = await priority.locator('option').allInnerTexts();
    check('the priority is a select of the catalog enum', offered.join(',') === 'Choose…,alta,media,baja', offered);
    await priority.evaluate((select) => {
      select.append(new Option('urgente', 'urgente'));
      select.value = 'urgente';
    });
    await a.locator('#edit-approve').click();
    const fieldError = await textBecomes(a.locator('[data-field="prioridad"] .field-error'), (t) => t.length > 0,
        'the refusal at prioridad').catch((e) => e.message);
    check("the validator's refusal shows next to the priority field", /urgente|prioridad|alta/.test(fieldError),
        fieldError);
    check('the priority field is marked invalid', (await priority.getAttribute('aria-invalid')) === 'true');
    const top = await a.locator('#decide-error').innerText();
    check('the general error shows on top', top.length > 0, top);
    check('nothing else is marked', (await a.locator('.field-error:not(:empty)').count()) === 1);
    await noStrayText(a, 'refusal');
    await shot(a, 'refused-1366');

    // Fixed and approved: back to the queue, the item gone from the open ones.
    await priority.selectOption('alta');
    await a.locator('#edit-approve').click();
    await a.waitForURL((url) => url.hash === '#/');
    const status = await textBecomes(a.locator('#status'), (t) => t.includes('approved'), 'status line');
    check('approving returns to the queue with a status message', status.includes(`#${env.CASE_ID}`), status);
    await a.locator(`#queue-rows tr[data-id="${env.XSS_ID}"]`).waitFor();
    check('the approved item left the open queue',
        (await a.locator(`#queue-rows tr[data-id="${env.CASE_ID}"]`).count()) === 0);
    const bClosed = await textBecomes(bCase.locator('.decide'), (t) => t.includes(`Resolved by ${env.STAFF_A}`),
        "B's case closed").catch((e) => e.message);
    check("B's open case shows the decision without reload", bClosed.includes('Resolved'), bClosed);

    // The script-tag message: shown literally, nothing runs.
    await a.goto(`${base}#/escalations/${env.XSS_ID}`);
    const shown = a.locator('.msg.current .msg-text');
    await shown.waitFor();
    check('the script message shows literally', (await shown.innerText()) === env.XSS_TEXT, await shown.innerText());
    check('it made no element', (await a.locator('#case img, #case script').count()) === 0);
    await a.waitForTimeout(500);  // an onerror would have fired by now
    await shot(a, 'xss-case-1366');

    // The decided case's trail, one click away: the raw outputs as stored, the staff action,
    // the chain's verdict (dispatchctl trail's content on the page).
    await a.goto(`${base}#/escalations/${env.CASE_ID}`);
    await a.locator('#trail-link').click();
    const chain = await textBecomes(a.locator('#trail-chain'), (t) => t.includes('verif'), 'the trail chain')
        .catch((e) => e.message);
    check('the trail link shows the chain verdict', chain.includes('The chain verifies across audit ids'), chain);
    const trailRaws = await a.locator('#trail .attempt pre.raw').allInnerTexts();
    const storedRaws = JSON.parse(env.CASE_ATTEMPTS).map((x) => x.raw);
    check('the trail shows each raw output as stored', JSON.stringify(trailRaws) === JSON.stringify(storedRaws),
        [trailRaws, storedRaws]);
    const staffActions = await a.locator('section[aria-labelledby="trail-staff"]').innerText();
    check('the trail names the staff member who decided', staffActions.includes(env.STAFF_A), staffActions);
    await noStrayText(a, 'trail');
    await shot(a, 'trail-1366');

    // Phone width: the queue as cards, the case in one column, the attempts stacked.
    await a.setViewportSize(phone);
    await shot(a, 'xss-case-375');
    await a.goto(`${base}#/escalations/${env.CASE_ID}`);
    await a.locator('.attempt').nth(2).waitFor();
    const [first, second] = [await attempts.nth(0).boundingBox(), await attempts.nth(1).boundingBox()];
    check('the attempts stack at 375 px', second.y > first.y && Math.abs(second.x - first.x) < 2, [first, second]);
    const width = await a.evaluate(() => document.documentElement.scrollWidth);
    check('nothing is wider than the phone', width <= phone.width, width);
    await shot(a, 'case-375');
    await a.goto(`${base}#/`);
    await a.locator(`#queue-rows tr[data-id="${env.XSS_ID}"]`).waitFor();
    await shot(a, 'queue-375');

    // Live: a new escalation appears in the open queue; after a daemon restart the page
    // reconnects and shows what came in, all without a reload.
    await a.setViewportSize(laptop);
    await a.evaluate(() => { window.notReloaded = true; });
    const created = await ask('post');
    const newRow = await a.locator(`#queue-rows tr[data-id="${created.id}"]`).waitFor().then(() => true, () => false);
    check('a new escalation appears in the queue without reload', newRow);
    const restart = ask('restart');
    const down = await textBecomes(a.locator('#live'), (t) => t.includes('reconnecting'), 'the live indicator')
        .catch((e) => e.message);
    check('the indicator says reconnecting while dispatchd is down', down.includes('reconnecting'), down);
    const after = await restart;
    const back = await a.locator(`#queue-rows tr[data-id="${after.id}"]`).waitFor().then(() => true, () => false);
    check('after the restart the queue shows the escalation that came in', back);
    const live = await a.locator('#live[data-state="live"]').waitFor().then(() => true, () => false);
    check('the indicator says live again', live);
    check('the page was not reloaded', await a.evaluate(() => window.notReloaded === true));
    await shot(a, 'queue-1366-after-restart');

    // Logout ends the session: the API then answers 401 and the page shows the login form.
    await a.getByRole('button', {name: 'Log out'}).click();
    await a.locator('#login-form').waitFor();
    const gone = await a.evaluate(async () => (await fetch('/api/session')).status);
    check('logout ends the session', gone === 401, gone);
  } finally {
    await browser.close();
  }
}

await finish(main);
