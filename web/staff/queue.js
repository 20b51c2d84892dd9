// The queue: open escalations by time left to their response-time target (overdue first,
// each with a badge), the others oldest first; with age, reason, channel, sender, the first line of
// the message and who holds each; filters by status (on the server), reason and channel
// (here, so that the counts per reason stay visible while one reason is shown).
import {api, apiPages} from './api.js';
import {$, age, append, el, firstLine, holder, reasonLabel} from './dom.js';

export const REASONS = ['contract_failed', 'model_escalated', 'needs_approval', 'review_flags', 'policy_violation',
  'provider_unavailable', 'send_failed', 'delivery_unknown', 'undecodable', 'tool_failed', 'conversation_limit',
  'suspected_loop', 'budget_exhausted', 'window_closed'];
// The oldest this many of a status are listed; a long history of resolved ones is the
// trail's business, not the queue's.
const k_max_rows = 5000;

const byAge = (a, b) => (Date.parse(a.created_at) - Date.parse(b.created_at)) || (a.escalation_id - b.escalation_id);
// Open cases first, the least time left (the most overdue) first; the others oldest first.
const isOpen = (r) => r.status === 'open' && typeof r.due_at === 'string';
export const byTimeLeft = (a, b) => {
  if (isOpen(a) !== isOpen(b)) return isOpen(a) ? -1 : 1;
  if (isOpen(a)) return (Date.parse(a.due_at) - Date.parse(b.due_at)) || byAge(a, b);
  return byAge(a, b);
};

// An open case's mark: "overdue N min" past its due time, else "due in N min" (whole
// minutes, rounded up as the API's minutes_left).
export function dueText(dueAt, now = Date.now()) {
  const left = Math.ceil((Date.parse(dueAt) - now) / 60000);
  return left <= 0 ? `overdue ${-left} min` : `due in ${left} min`;
}

function dueBadge(r) {
  if (!isOpen(r)) return null;
  const overdue = Date.parse(r.due_at) <= Date.now();
  return el('span', {class: overdue ? 'badge overdue' : 'badge due', 'data-due': r.due_at, title: `due ${r.due_at}`},
      dueText(r.due_at));
}

export class Queue {
  constructor({me, onError}) {
    this.me = me;
    this.onError = onError;
    this.rows = [];
    this.loading = null;
    append($('filter-reason'), REASONS.map((r) => el('option', {value: r}, reasonLabel(r))));
    // The channels this dispatchd has (GET /api/channels): name -> how staff see it.
    this.channels = {};
    this.loadChannels();
    $('filter-status').addEventListener('change', () => this.load());
    $('filter-reason').addEventListener('change', () => this.render());
    $('filter-channel').addEventListener('change', () => this.render());
    // Ages move on by themselves.
    setInterval(() => {
      for (const cell of document.querySelectorAll('#queue-rows [data-created]')) {
        cell.textContent = age(cell.dataset.created);
      }
      for (const badge of document.querySelectorAll('#queue-rows [data-due]')) {
        badge.textContent = dueText(badge.dataset.due);
        const overdue = Date.parse(badge.dataset.due) <= Date.now();
        badge.classList.toggle('overdue', overdue);
        badge.classList.toggle('due', !overdue);
      }
    }, 30000);
  }

  statusFilter() {
    return $('filter-status').value;
  }

  // "active" is open and claimed together: what is still waiting for a person.
  matchesStatus(row) {
    const wanted = this.statusFilter();
    if (wanted === 'active') return row.status === 'open' || row.status === 'claimed';
    return wanted === '' || row.status === wanted;
  }

  async load() {
    const wanted = this.statusFilter();
    const fetchStatus = (s) => apiPages(s ? `/api/escalations?status=${encodeURIComponent(s)}` : '/api/escalations',
        k_max_rows);
    const request = (async () => {
      const lists = wanted === 'active' ? await Promise.all([fetchStatus('open'), fetchStatus('claimed')]) :
        [await fetchStatus(wanted)];
      return {rows: lists.flatMap((l) => l.rows).filter((r) => r && typeof r === 'object').sort(byTimeLeft),
        more: lists.some((l) => l.more)};
    })();
    this.loading = request;
    this.loadBudget();
    try {
      const {rows, more} = await request;
      if (this.loading !== request) return;  // a newer load answers instead
      this.rows = rows;
      this.more = more;
      this.render();
    } catch (error) {
      if (this.loading === request) this.onError(error);
    }
  }

  // The model's daily spend budget (GET /api/budget), one line above the queue while one is
  // configured; marked while it is closed (no model calls until the next UTC day).
  async loadBudget() {
    try {
      const budget = await api('GET', '/api/budget');
      const line = $('budget');
      line.hidden = budget.daily_usd === null;
      line.textContent = budget.text ?? '';
      line.classList.toggle('closed', budget.state !== 'open');
    } catch (error) {
      this.onError(error);
    }
  }

  // An escalation.updated event: the row's status and holder change in place; a row that
  // no longer matches the status filter leaves.
  update(event) {
    const row = this.rows.find((r) => r.escalation_id === event.escalation_id);
    if (!row) {
      if (this.matchesStatus(event)) this.load();
      return;
    }
    row.status = event.status;
    row.assignee = event.assignee ?? null;
    if (!this.matchesStatus(row)) this.rows = this.rows.filter((r) => r !== row);
    this.rows.sort(byTimeLeft);  // a claimed case leaves the open ones' order
    this.render();
  }

  // A decision taken on this page: the case is neither open nor claimed any more, so it
  // leaves the waiting lists at once rather than showing until the reload answers.
  decided(id) {
    if (!['active', 'open', 'claimed'].includes(this.statusFilter())) return;
    this.rows = this.rows.filter((r) => r.escalation_id !== id);
    this.render();
  }

  render() {
    const reason = $('filter-reason').value;
    const channel = $('filter-channel').value;
    const inChannel = this.rows.filter((r) => !channel || r.channel === channel);
    const shown = inChannel.filter((r) => !reason || r.reason === reason);
    this.renderCounts(inChannel, reason);
    $('queue-rows').replaceChildren(...shown.map((r) => this.renderRow(r)));
    $('queue-empty').hidden = shown.length > 0;
    $('queue-table').hidden = shown.length === 0;
  }

  renderCounts(rows, selected) {
    const counts = new Map();
    for (const r of rows) counts.set(r.reason, (counts.get(r.reason) ?? 0) + 1);
    const chip = (reason, n, label) => el('li', {},
        el('button', {type: 'button', class: 'chip', 'aria-pressed': String(selected === reason),
          onclick: () => {
            $('filter-reason').value = reason;
            this.render();
          }}, label, ' ', el('span', {class: 'count'}, String(n))));
    $('counts').replaceChildren(chip('', rows.length, 'All'),
        ...[...counts.entries()].sort().map(([r, n]) => chip(r, n, reasonLabel(r))),
        ...(this.more ? [el('li', {class: 'more'}, `the oldest ${k_max_rows.toLocaleString('en')} shown`)] : []));
  }

  async loadChannels() {
    try {
      const channels = await api('GET', '/api/channels');
      for (const c of channels) this.channels[c.name] = c.label;
      append($('filter-channel'), channels.map((c) => el('option', {value: c.name}, c.label)));
      this.render();
    } catch (error) {
      this.onError(error);
    }
  }

  renderRow(r) {
    const id = Number(r.escalation_id);
    const cls = `status-${String(r.status).replace(/[^a-z]/g, '')}`;
    return el('tr', {class: cls, 'data-id': id},
        el('td', {'data-label': '#'}, el('a', {href: `#/escalations/${id}`, 'aria-label': `Open escalation ${id}`},
            `#${id}`)),
        el('td', {'data-label': 'Age', 'data-created': r.created_at, title: r.created_at}, age(r.created_at)),
        el('td', {'data-label': 'Reason'}, el('span', {class: 'reason'}, reasonLabel(r.reason)),
            ...(isOpen(r) ? [' ', dueBadge(r)] : [])),
        el('td', {'data-label': 'Channel'}, this.channels[r.channel] ?? String(r.channel ?? '')),
        el('td', {'data-label': 'Sender', class: 'sender'}, String(r.sender ?? '')),
        el('td', {'data-label': 'Message', class: 'text'}, firstLine(r.text)),
        el('td', {'data-label': 'Status', class: 'holder'}, holder(r, this.me)));
  }
}
