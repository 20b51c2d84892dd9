// The staff API (daemon/staff_api.cpp) over fetch: JSON in and out, the session cookie sent
// by the browser, the CSRF token on every state-changing request. A 401 anywhere but the
// session endpoint itself means the session ended: the app goes back to the login form.

export class ApiError extends Error {
  constructor(status, body) {
    super(body && typeof body.error === 'string' ? body.error : `HTTP ${status}`);
    this.status = status;
    this.body = body ?? {};
  }
}

let csrf = '';
let onSessionEnded = () => {};

export function setCsrf(token) {
  csrf = typeof token === 'string' ? token : '';
}

export function whenSessionEnds(handler) {
  onSessionEnded = handler;
}

async function call(method, path, body) {
  const headers = {Accept: 'application/json'};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET' && csrf) headers['X-CSRF-Token'] = csrf;
  let response;
  try {
    response = await fetch(path, {
      method, headers, credentials: 'same-origin', cache: 'no-store',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, {error: 'dispatchd did not answer: is it running?'});
  }
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = {error: `HTTP ${response.status}: ${text.slice(0, 200)}`};
    }
  }
  if (response.status === 401 && path !== '/api/session') onSessionEnded();
  if (!response.ok) throw new ApiError(response.status, data);
  return {data, response};
}

export async function api(method, path, body) {
  return (await call(method, path, body)).data;
}

// A listing that comes in pages (a Link rel="next" header names the next one), read until
// it ends or `maxRows` rows are in: the rows, and whether some were left unread.
export async function apiPages(path, maxRows) {
  const rows = [];
  let next = path;
  while (next && rows.length < maxRows) {
    const {data, response} = await call('GET', next);
    if (Array.isArray(data)) rows.push(...data);
    next = nextPage(response.headers.get('Link'));
  }
  return {rows, more: Boolean(next)};
}

// One page of a listing or a search: its rows and the next page's path (null at the end).
export async function apiPage(path) {
  const {data, response} = await call('GET', path);
  return {rows: Array.isArray(data) ? data : [], next: nextPage(response.headers.get('Link'))};
}

// Only the API's own listings are followed: a Link header cannot send the page elsewhere.
function nextPage(link) {
  const match = /<([^>]*)>;\s*rel="next"/.exec(link ?? '');
  const path = match ? match[1] : '';
  return path.startsWith('/api/escalations?') || path.startsWith('/api/search?') ? path : null;
}
