// The staff desk in headless Chromium (Debian's), driven by playwright-core against the real
// dispatchd that desk_test.py started: a hand-over after an idle claim, an internal note, the
// response-time badge and saved replies, seen from two accounts in two browser contexts
// (separate sessions). Prints one pass/FAIL line per check; exit 1 when any failed.
//
// Environment (set by desk_test.py):
//   STAFF_URL                                        http://127.0.0.1:PORT
//   STAFF_A, STAFF_A_TOKEN, STAFF_B, STAFF_B_TOKEN   two accounts (ana, bo)
//   HANDOVER_ID   the case ana claims and bo takes over once the claim is idle (1 minute)
//   REPLY_ID      the case bo answers with a saved reply (due in 60 minutes)
//   OVERDUE_ID    the case whose reason is due in 1 minute
//   NOTE_TEXT     bo's internal note on the hand-over case
//   GOOD_NAME, GOOD_FILLED         the saved reply to send, and its text filled for REPLY_ID by bo
//   LONG_NAME, LONG_FILLED_LENGTH  the saved reply past 4,096 characters once filled, its length
//   EARLIER_ID, EARLIER_TEXT, EARLIER_NOTE  the reply case's customer's earlier case (dismissed with
//                                           that note), and its message
//   CUSTOMER_TYPED, REPLY_TEXT    that customer's number as staff type it; the reply case's message
//   SCREENSHOTS, CHROMIUM
import {ask, base, check, finish, fromPage, launch, login, noStrayText, shot, textBecomes, twoSessions,
  watchedPage} from './browser_support.mjs';

const env = process.env;
const [A, B] = [env.STAFF_A, env.STAFF_B];
// Past the 1-minute idle limit and response target: the page's own timers (the queue's
// badges every 30 s, the case's take-over once the minutes it was told have passed).
const minuteAndMore = 150000;

const row = (page, id) => page.locator(`#queue-rows tr[data-id="${id}"]`);
const badge = (page, id) => row(page, id).locator('.badge');

async function openCase(page, id) {
  await page.goto(`${base}#/escalations/${id}`);
  await page.locator('.holder-line').waitFor();
  await page.locator('#live[data-state="live"]').waitFor();
}

const markNotReloaded = (page) => page.evaluate(() => { window.notReloaded = true; });
const notReloaded = (page) => page.evaluate(() => window.notReloaded === true);

async function main() {
  const browser = await launch();
  try {
    const [contextA, contextB] = await twoSessions(browser);

    // ana's queue: every open case with its response-time badge.
    const aQueue = await watchedPage(contextA, 'A queue');
    await login(aQueue, A, env.STAFF_A_TOKEN);
    await row(aQueue, env.OVERDUE_ID).waitFor();
    await aQueue.locator('#live[data-state="live"]').waitFor();
    const startBadges = [await badge(aQueue, env.OVERDUE_ID).innerText(), await badge(aQueue, env.REPLY_ID).innerText()];
    check('the queue shows the 1-minute case due in 1 min and the 60-minute one due in 60 min',
        startBadges[0] === 'due in 1 min' && /^due in (59|60) min$/.test(startBadges[1]), startBadges);
    const firstRow = await aQueue.locator('#queue-rows tr').first().getAttribute('data-id');
    check('the case due first is listed first', firstRow === env.OVERDUE_ID, firstRow);
    await noStrayText(aQueue, 'queue');
    await shot(aQueue, 'desk-queue-start');
    await markNotReloaded(aQueue);

    // Both open the hand-over case, each in a session of their own.
    const aCase = await watchedPage(contextA, 'A case');
    await openCase(aCase, env.HANDOVER_ID);
    const bCase = await watchedPage(contextB, 'B case');
    await login(bCase, B, env.STAFF_B_TOKEN);
    await openCase(bCase, env.HANDOVER_ID);
    for (const page of [aCase, bCase]) await markNotReloaded(page);
    check('the two contexts are two sessions', (await aCase.locator('#who').innerText()) === A &&
        (await bCase.locator('#who').innerText()) === B);

    // ana claims and then leaves the case alone; bo sees the claim live, and no Take over yet.
    await aCase.getByRole('button', {name: 'Claim'}).click();
    const aHolds = await textBecomes(aCase.locator('.holder-line'), (t) => t === `Claimed by ${A} (you)`, 'A holds')
        .catch((e) => e.message);
    check('ana holds the case after Claim', aHolds === `Claimed by ${A} (you)`, aHolds);
    const bSees = await textBecomes(bCase.locator('.holder-line'), (t) => t === `Claimed by ${A}`, "B's case")
        .catch((e) => e.message);
    check("bo's open case shows ana's claim without reload", bSees === `Claimed by ${A}`, bSees);
    const hint = await textBecomes(bCase.locator('.holder-box .hint'), (t) => t.length > 0, "B's take-over hint")
        .catch((e) => e.message);
    check('bo is told the take-over is possible in 1 min', hint === 'Take-over possible in 1 min', hint);
    check('bo has no Take over button while the claim is not idle', !(await bCase.locator('#takeover').isVisible()));
    check('nor a Claim button', !(await bCase.getByRole('button', {name: 'Claim'}).isVisible()));
    const [early, refusal] = await fromPage(bCase, 'POST', `/api/escalations/${env.HANDOVER_ID}/takeover`, {});
    check('the API refuses bo\'s take-over before the idle time: 409 "not idle yet"',
        early === 409 && /not idle yet/.test(refusal.error), [early, refusal]);
    await shot(bCase, 'desk-claimed-b');

    // bo's internal note (bo does not hold the case: ana's claim stays idle): on ana's page live.
    await bCase.locator('#note-text').fill(env.NOTE_TEXT);
    await bCase.getByRole('button', {name: 'Add note'}).click();
    const bNotes = await textBecomes(bCase.locator('#notes'), (t) => t.includes(env.NOTE_TEXT), "B's notes")
        .catch((e) => e.message);
    check("bo's note is listed in his case view", bNotes.includes(env.NOTE_TEXT), bNotes);
    const aNotes = await textBecomes(aCase.locator('#notes'), (t) => t.includes(env.NOTE_TEXT), "A's notes")
        .catch((e) => e.message);
    check("ana's page shows bo's note without reload, under his name", aNotes.includes(env.NOTE_TEXT) &&
        aNotes.startsWith(B), aNotes);
    const title = await aCase.locator('#notes-title').innerText();
    check("ana's page counts one note", title === 'Internal notes (1)', title);
    check("ana's case page was not reloaded", await notReloaded(aCase));
    await shot(aCase, 'desk-note-a');

    // A saved reply past 4,096 characters once filled: refused on the page, nothing sent.
    const bReply = await watchedPage(contextB, 'B reply');
    await openCase(bReply, env.REPLY_ID);
    const offered = await bReply.locator('#saved-reply option').allInnerTexts();
    check('the reply card offers the saved replies', offered.includes(env.GOOD_NAME) && offered.includes(env.LONG_NAME),
        offered);
    await bReply.locator('#saved-reply').selectOption({label: env.LONG_NAME});
    const longText = await bReply.locator('#reply-text').inputValue();
    check('picking the long one fills the reply box with it, {customer} filled in',
        longText.length === Number(env.LONG_FILLED_LENGTH) && !longText.includes('{customer}'),
        [longText.length, longText.slice(-30)]);
    await bReply.getByRole('button', {name: 'Send reply'}).click();
    const refused = await textBecomes(bReply.locator('#decide-error'), (t) => t.length > 0, 'the refusal')
        .catch((e) => e.message);
    check('the too long reply is refused with the error shown', /4,?096/.test(refused), refused);
    check('the page stays on the case', new URL(bReply.url()).hash === `#/escalations/${env.REPLY_ID}`, bReply.url());
    const afterRefusal = await ask('sent');
    check('nothing was sent nor stored for the refused reply',
        afterRefusal.sent.length === 0 && afterRefusal.staff_replies === 0, JSON.stringify(afterRefusal));
    await shot(bReply, 'desk-saved-refused');

    // The customer's story under the case: the earlier case, how it ended, and its message.
    const other = bReply.locator(`#customer-cases li[data-id="${env.EARLIER_ID}"]`);
    const otherText = await other.innerText().catch((e) => e.message);
    check("the case lists the customer's earlier case, dismissed, with why",
        otherText.includes(`#${env.EARLIER_ID}`) && otherText.includes(`Dismissed by ${A}`) &&
        otherText.includes(env.EARLIER_NOTE), otherText);
    const messages = await bReply.locator('#customer-messages > li').allInnerTexts();
    check("the customer's messages across cases, newest first", messages.length === 2 &&
        messages[0].includes(env.REPLY_TEXT) && messages[1].includes(env.EARLIER_TEXT) &&
        messages[1].includes(`escalation #${env.EARLIER_ID}`), messages);
    await bReply.locator('.history-box').scrollIntoViewIfNeeded();
    await shot(bReply, 'desk-history');

    // Search by the number as staff type it: both of the customer's cases, newest first.
    const bSearch = await watchedPage(contextB, 'B search');
    await bSearch.goto(`${base}#/`);
    await bSearch.locator('#search-box summary').click();
    await bSearch.locator('#search-customer').fill(env.CUSTOMER_TYPED);
    await bSearch.locator('#search-go').click();
    await bSearch.locator('#search-rows tr').first().waitFor();
    const found = await bSearch.locator('#search-rows tr').evaluateAll((rows) => rows.map((r) => r.dataset.id));
    check("the search by the customer's number finds both cases, newest first",
        JSON.stringify(found) === JSON.stringify([env.REPLY_ID, env.EARLIER_ID]), found);
    const summary = await bSearch.locator('#search-summary').innerText();
    check('the search says how many it found', summary === '2 escalations, newest first.', summary);
    await shot(bSearch, 'desk-search');
    await bSearch.locator(`#search-rows tr[data-id="${env.EARLIER_ID}"] a`).click();
    const earlierTitle = await textBecomes(bSearch.locator('#case-title'),
        (t) => t.startsWith(`Escalation #${env.EARLIER_ID}`), 'the earlier case').catch((e) => e.message);
    check('a found case opens', earlierTitle.startsWith(`Escalation #${env.EARLIER_ID}`), earlierTitle);
    await bSearch.close();

    // The response-time target: the 1-minute case turns overdue on ana's queue by itself.
    const overdue = await textBecomes(badge(aQueue, env.OVERDUE_ID), (t) => t.startsWith('overdue'),
        'the 1-minute badge', minuteAndMore).catch((e) => e.message);
    check('the queue marks the case past its target "overdue N min"', /^overdue \d+ min$/.test(overdue), overdue);
    check('its badge is styled overdue',
        (await badge(aQueue, env.OVERDUE_ID).getAttribute('class')) === 'badge overdue');
    const stillDue = await badge(aQueue, env.REPLY_ID).innerText();
    check('the 60-minute case is still "due in"', /^due in (5\d|60) min$/.test(stillDue), stillDue);
    const overdueFirst = await aQueue.locator('#queue-rows tr').first().getAttribute('data-id');
    check('the overdue case is listed first', overdueFirst === env.OVERDUE_ID, overdueFirst);
    const handoverHolder = await row(aQueue, env.HANDOVER_ID).locator('td.holder').innerText();
    check("ana's queue shows her claim and no badge for the claimed case",
        handoverHolder === `Claimed by ${A} (you)` && (await badge(aQueue, env.HANDOVER_ID).count()) === 0,
        handoverHolder);
    check("ana's queue page was not reloaded", await notReloaded(aQueue));
    await shot(aQueue, 'desk-queue-overdue');

    // Once ana's claim has been idle a minute, bo's page offers Take over by itself.
    const takeover = bCase.locator('#takeover');
    const offeredTakeover = await takeover.waitFor({state: 'visible', timeout: minuteAndMore})
        .then(() => true, (e) => e.message);
    check("bo's page offers Take over once ana's claim is idle, without reload", offeredTakeover === true,
        offeredTakeover);
    check("bo's case page was not reloaded", await notReloaded(bCase));
    await takeover.click();
    const bHolds = await textBecomes(bCase.locator('.holder-line'), (t) => t === `Claimed by ${B} (you)`, 'B holds')
        .catch((e) => e.message);
    check('bo holds the case after Take over', bHolds === `Claimed by ${B} (you)`, bHolds);
    const bHandOver = await textBecomes(bCase.locator('.notes-box details'), (t) => t.startsWith('Hand-overs (1)'),
        "B's hand-overs")
        .catch((e) => e.message);
    check("bo's page lists the hand-over", bHandOver.startsWith('Hand-overs (1)'), bHandOver);
    await bCase.locator('.notes-box details summary').click();
    await shot(bCase, 'desk-takeover-b');
    const aSees = await textBecomes(aCase.locator('.holder-line'), (t) => t === `Claimed by ${B}`, "A's case")
        .catch((e) => e.message);
    check("ana's open case shows bo holding it, without reload", aSees === `Claimed by ${B}`, aSees);
    await textBecomes(aCase.locator('.notes-box details'), (t) => t.startsWith('Hand-overs (1)'), "A's hand-overs")
        .catch(() => null);
    await aCase.locator('.notes-box details summary').click();
    const aHandOver = await aCase.locator('.notes-box details li').allInnerTexts();
    check("ana's page lists the take-over: by bo, from ana to bo, rule idle", aHandOver.length === 1 &&
        aHandOver[0].includes(`takeover by ${B}: ${A} → ${B} (idle)`), aHandOver);
    check('ana has no Release button any more', !(await aCase.locator('#release').isVisible()));
    const aRow = await textBecomes(row(aQueue, env.HANDOVER_ID).locator('td.holder'), (t) => t === `Claimed by ${B}`,
        "A's queue").catch((e) => e.message);
    check("ana's queue shows bo holding the case, without reload", aRow === `Claimed by ${B}`, aRow);
    for (const [page, label] of [[aCase, 'case'], [aQueue, 'queue']]) {
      check(`ana's ${label} page was not reloaded`, await notReloaded(page));
    }
    await noStrayText(aCase, 'case after the take-over');
    await shot(aCase, 'desk-takeover-a');

    // The good saved reply: filled for the case by the server, sent as it is.
    await bReply.locator('#saved-reply').selectOption({label: env.GOOD_NAME});
    const goodText = await bReply.locator('#reply-text').inputValue();
    check('picking the saved reply fills the box with its text filled for the case', goodText === env.GOOD_FILLED,
        [goodText, env.GOOD_FILLED]);
    await shot(bReply, 'desk-saved-picked');
    await bReply.getByRole('button', {name: 'Send reply'}).click();
    await bReply.waitForURL((url) => url.hash === '#/');
    const status = await textBecomes(bReply.locator('#status'), (t) => t.includes('answered'), 'status line')
        .catch((e) => e.message);
    check('sending returns to the queue: answered', status === `Escalation #${env.REPLY_ID} answered.`, status);
    const gone = await row(bReply, env.REPLY_ID).waitFor({state: 'detached'}).then(() => true, (e) => e.message);
    check('the answered case left the open queue', gone === true, gone);
    await shot(bReply, 'desk-saved-sent');
  } finally {
    await browser.close();
  }
}

await finish(main);
