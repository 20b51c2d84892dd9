// The staff workspace: login, the queue and one case, kept current by Server-Sent Events.
// Plain ES modules served by dispatchd itself (web/assets.h); the page's CSP allows no
// inline script or style, and nothing here turns data into HTML (dom.js).
import {api, setCsrf, whenSessionEnds} from './api.js';
import {CaseView} from './case.js';
import {$, announce} from './dom.js';
import {Live} from './live.js';
import {Queue} from './queue.js';
import {Search} from './search.js';
import {TrailView} from './trail.js';

const app = {me: null, queue: null, search: null, caseView: null, trailView: null, live: null, reload: null,
  provider: null};

// Whether the model provider answers (GET /api/provider): a line in the header while it is
// failing (its breaker open: messages wait), read again every 10 s while signed in.
async function showProvider() {
  try {
    const provider = await api('GET', '/api/provider');
    const line = $('provider');
    line.hidden = provider.state === 'answering';
    line.textContent = provider.text ?? '';
  } catch (error) {
    reportError(error);
  }
}

function reportError(error) {
  if (error.status === 401) return;
  announce(error.message);
}

function route() {
  if (!app.me) return;
  const match = /^#\/escalations\/(\d{1,18})$/.exec(location.hash);
  const trail = /^#\/messages\/(\d{1,18})\/trail$/.exec(location.hash);
  $('queue').hidden = Boolean(match || trail);
  $('case').hidden = !match;
  $('trail').hidden = !trail;
  if (trail) {
    announce('');
    app.caseView.item = null;
    app.trailView.open(Number(trail[1]));
  } else if (match) {
    announce('');
    app.caseView.open(Number(match[1]));
  } else {
    const fromCase = app.caseView.item !== null;
    app.caseView.item = null;
    app.queue.load();
    if (fromCase) $('queue-title').focus();
  }
}

// Several events in a burst (a batch of new escalations) make one reload.
function reloadSoon() {
  clearTimeout(app.reload);
  app.reload = setTimeout(() => {
    if (!$('queue').hidden) app.queue.load();
  }, 150);
}

function signedIn(session) {
  app.me = session.name;
  setCsrf(session.csrf);
  $('who').textContent = session.name;
  $('session').hidden = false;
  $('login').hidden = true;
  if (!app.queue) {
    app.queue = new Queue({me: app.me, onError: reportError});
    app.search = new Search({me: app.me, onError: reportError});
    app.caseView = new CaseView({me: app.me, onError: reportError, onDecided: (id) => app.queue.decided(id)});
    app.trailView = new TrailView({onError: reportError});
  }
  app.queue.me = app.search.me = app.caseView.me = app.me;
  app.live.start();
  clearInterval(app.provider);
  showProvider();
  app.provider = setInterval(showProvider, 10000);
  route();
}

function showLogin(message = '') {
  app.live.stop();
  clearInterval(app.provider);
  setCsrf('');
  $('session').hidden = true;
  $('queue').hidden = true;
  $('case').hidden = true;
  $('trail').hidden = true;
  $('login').hidden = false;
  $('login-error').textContent = message;
  $('login-name').focus();
}

async function checkSession(message) {
  try {
    signedIn(await api('GET', '/api/session'));
  } catch (error) {
    showLogin(error.status === 401 ? message : error.message);
  }
}

async function login(event) {
  event.preventDefault();
  const name = $('login-name').value.trim();
  const token = $('login-token').value;
  if (!name || !token) {
    $('login-error').textContent = 'Enter your name and your token.';
    return;
  }
  try {
    const session = await api('POST', '/api/session', {name, token});
    $('login-token').value = '';
    signedIn(session);
  } catch (error) {
    $('login-error').textContent = error.status === 401 ? 'That name and token do not match an account.' :
      error.message;
    $('login-token').focus();
  }
}

async function logout() {
  try {
    await api('DELETE', '/api/session');
  } catch {
    // the session is gone either way
  }
  app.me = null;
  showLogin('You are signed out.');
}

app.live = new Live({
  created: () => reloadSoon(),
  updated: (event) => {
    app.queue?.update(event);
    app.caseView?.update(event);
  },
  resync: () => {
    announce('Reconnected: the queue was reloaded.');
    reloadSoon();
  },
  closed: () => checkSession('Your session ended: sign in again.'),
});
whenSessionEnds(() => showLogin('Your session ended: sign in again.'));
$('login-form').addEventListener('submit', login);
$('logout').addEventListener('click', logout);
window.addEventListener('hashchange', route);
checkSession('');
