// The customer's story beside a case (GET /api/escalations/{id}/history): their other
// escalations with how each ended, and every message they sent on this channel, across
// conversations, newest first, with what was sent in answer; "Older messages" reads the
// next page.
import {api} from './api.js';
import {append, el, firstLine, holder, reasonLabel, when} from './dom.js';

export class CustomerHistory {
  constructor({escalationId, me, onError}) {
    this.id = escalationId;
    this.me = me;
    this.onError = onError;
    this.cases = el('div', {id: 'customer-cases'});
    this.messages = el('ol', {class: 'thread history', id: 'customer-messages'});
    this.older = el('button', {type: 'button', id: 'customer-older', class: 'secondary', hidden: true,
      onclick: () => this.load(this.next)}, 'Older messages');
    this.next = null;
    this.box = el('section', {class: 'history-box', 'aria-labelledby': 'history-title'},
        el('h2', {id: 'history-title'}, 'This customer'), this.cases,
        el('h3', {}, 'Messages across conversations, newest first'), this.messages, this.older);
  }

  async load(before = null) {
    try {
      const query = before ? `?before=${encodeURIComponent(before)}` : '';
      const page = await api('GET', `/api/escalations/${this.id}/history${query}`);
      if (Array.isArray(page.cases)) this.renderCases(page.cases);
      append(this.messages, (page.messages ?? []).map((m) => this.renderMessage(m)));
      this.next = page.next ?? null;
      this.older.hidden = this.next === null;
    } catch (error) {
      this.cases.replaceChildren(el('p', {class: 'error'}, error.message));
      if (error.status !== 401) this.onError(error);
    }
  }

  renderCases(cases) {
    this.cases.replaceChildren();
    if (!cases.length) {
      append(this.cases, el('p', {class: 'empty'}, 'No other escalations.'));
      return;
    }
    append(this.cases, [el('h3', {}, `Other escalations (${cases.length})`),
      el('ul', {class: 'other-cases'}, cases.map((c) => el('li', {'data-id': c.escalation_id},
          el('a', {href: `#/escalations/${Number(c.escalation_id)}`}, `#${Number(c.escalation_id)}`),
          ` · ${when(c.created_at)} · `, el('span', {class: 'reason'}, reasonLabel(c.reason)), ' · ',
          holder(c, this.me), c.resolution ? ` · ${firstLine(c.resolution)}` : '',
          el('p', {class: 'msg-text'}, firstLine(c.text)))))]);
  }

  renderMessage(m) {
    const current = m.escalation_id === this.id;
    return el('li', {class: `msg in${current ? ' this-case' : ''}`},
        el('p', {class: 'msg-head'}, el('strong', {}, when(m.received_at)),
            m.escalation_id ? [' · ', current ? 'this escalation' :
              el('a', {href: `#/escalations/${Number(m.escalation_id)}`}, `escalation #${Number(m.escalation_id)}`)] :
              null),
        el('p', {class: 'msg-text'}, String(m.text ?? '')),
        (m.replies ?? []).map((r) => el('div', {class: 'msg out'},
            el('p', {class: 'msg-head'}, el('strong', {}, 'Sent'), ` · ${when(r.updated_at)} · ${r.status ?? ''}`,
                r.created_by ? ` · by ${r.created_by}` : ''),
            el('p', {class: 'msg-text'}, String(r.body ?? '')))));
  }
}
