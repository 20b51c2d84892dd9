// Search (the queue page's search form): escalations by customer (a number as typed or an
// address), text (in the message or a staff note), reason, status and days, newest first,
// from GET /api/search; "More" follows the answer's next page.
import {apiPage} from './api.js';
import {$, append, el, firstLine, holder, reasonLabel, when} from './dom.js';
import {REASONS} from './queue.js';

const FIELDS = ['customer', 'text', 'reason', 'status', 'from', 'to'];

export class Search {
  constructor({me, onError}) {
    this.me = me;
    this.onError = onError;
    this.next = null;
    append($('search-reason'), REASONS.map((r) => el('option', {value: r}, reasonLabel(r))));
    $('search').addEventListener('submit', (e) => {
      e.preventDefault();
      this.run();
    });
    $('search-clear').addEventListener('click', () => this.clear());
    $('search-more').addEventListener('click', () => this.more());
  }

  query() {
    const params = new URLSearchParams();
    for (const field of FIELDS) {
      const value = $(`search-${field}`).value.trim();
      if (value) params.set(field, value);
    }
    return params;
  }

  async run() {
    const params = this.query();
    if ([...params.keys()].length === 0) {
      this.clear();
      return;
    }
    $('search-rows').replaceChildren();
    await this.show(`/api/search?${params}`);
  }

  async more() {
    if (this.next) await this.show(this.next);
  }

  async show(path) {
    try {
      const {rows, next} = await apiPage(path);
      this.next = next;
      append($('search-rows'), rows.filter((r) => r && typeof r === 'object').map((r) => this.renderRow(r)));
      const count = $('search-rows').children.length;
      $('search-results').hidden = false;
      $('search-summary').textContent = count === 0 ? 'No escalation matches.' :
        `${count} escalation${count === 1 ? '' : 's'}${next ? ' so far' : ''}, newest first.`;
      $('search-table').hidden = count === 0;
      $('search-more').hidden = !next;
    } catch (error) {
      $('search-results').hidden = false;
      $('search-summary').textContent = error.message;
      if (error.status !== 400) this.onError(error);
    }
  }

  clear() {
    for (const field of FIELDS) $(`search-${field}`).value = '';
    this.next = null;
    $('search-rows').replaceChildren();
    $('search-results').hidden = true;
  }

  renderRow(r) {
    const id = Number(r.escalation_id);
    return el('tr', {'data-id': id},
        el('td', {'data-label': '#'}, el('a', {href: `#/escalations/${id}`, 'aria-label': `Open escalation ${id}`},
            `#${id}`)),
        el('td', {'data-label': 'Opened', title: r.created_at}, when(r.created_at)),
        el('td', {'data-label': 'Reason'}, el('span', {class: 'reason'}, reasonLabel(r.reason))),
        el('td', {'data-label': 'Sender', class: 'sender'}, String(r.sender ?? '')),
        el('td', {'data-label': 'Message', class: 'text'}, firstLine(r.text)),
        el('td', {'data-label': 'Status', class: 'holder'}, holder(r, this.me),
            r.resolution ? el('small', {class: 'resolution'}, ` · ${firstLine(r.resolution)}`) : null));
  }
}
