// One escalation (route #/escalations/{id}): the conversation in time order, the model's
// attempts side by side, this message's actions, and the decision panel (claim, approve,
// edit and approve, reply, dismiss). A refused edit shows each validator error at its field.
// The holder box hands a claim over (release, take over); staff's internal notes, never sent
// to the customer, are listed with a form to add one. The reply card offers the saved
// replies, filled for this case by the server (GET /api/escalations/{id}/replies): picking
// one puts its text in the reply box, to edit before sending. Below, the customer's other
// escalations and messages across conversations (history.js). The message's files are under
// the conversation (media.js). Where the channel has a reply
// window, the panel says whether it is open; while it is closed the action form starts on an
// approved template action, shows the template it sends, and free-form replies are off
// (reach.js).
import {api} from './api.js';
import {$, announce, append, el, holder, reasonLabel, when} from './dom.js';
import {ActionForm, parseRawOutput} from './form.js';
import {CustomerHistory} from './history.js';
import {fileList} from './media.js';
import {approvedTemplates, templateNote, windowClosed, windowLine} from './reach.js';

const CLOSED = new Set(['resolved', 'dismissed']);
const DONE = {approve: 'approved', edit: 'edited and approved', reply: 'answered', dismiss: 'dismissed'};
// Changes after which the case's notes, hand-overs and take-over time are read again (a claim
// seen live starts the take-over clock the page shows).
const DESK_CHANGES = new Set(['staff_claim', 'staff_note', 'staff_release', 'staff_takeover', 'staff_reassign']);

export class CaseView {
  constructor({me, onError, onDecided}) {
    this.me = me;
    this.onError = onError;
    // Told of each decision taken here before the view goes back to the queue.
    this.onDecided = onDecided ?? (() => {});
    this.item = null;
    this.section = $('case');
  }

  async open(id) {
    this.item = null;
    this.section.replaceChildren(el('p', {class: 'loading'}, `Loading escalation #${id}…`));
    try {
      const [item, catalog, saved] = await Promise.all([api('GET', `/api/escalations/${id}`), api('GET', '/api/catalog'),
        api('GET', `/api/escalations/${id}/replies`).catch(() => [])]);
      this.item = item;
      this.catalog = catalog;
      this.saved = Array.isArray(saved) ? saved : [];
      this.render();
    } catch (error) {
      this.section.replaceChildren(el('h1', {id: 'case-title', tabindex: -1}, `Escalation #${id}`),
          el('p', {class: 'error'}, error.status === 404 ? 'There is no such escalation.' : error.message),
          el('p', {}, el('a', {href: '#/'}, 'Back to the queue')));
      if (error.status !== 404) this.onError(error);
    }
    $('case-title')?.focus();
  }

  // escalation.updated for the open case: someone else's claim or decision shows at once.
  update(event) {
    if (!this.item || this.item.escalation_id !== event.escalation_id) return;
    const wasClosed = CLOSED.has(this.item.status);
    this.item.status = event.status;
    this.item.assignee = event.assignee ?? null;
    this.renderHolder();
    if (!wasClosed && CLOSED.has(event.status)) this.renderClosed();
    if (DESK_CHANGES.has(event.change)) this.reloadDesk();
  }

  // The notes, the hand-overs and when a take-over is allowed, read again.
  // Only the latest read applies: an earlier one answered late (a timer's, under load) would
  // put back the case as it was before a hand-over.
  async reloadDesk() {
    const asked = this.deskReads = (this.deskReads ?? 0) + 1;
    try {
      const item = await api('GET', `/api/escalations/${this.item.escalation_id}`);
      if (asked !== this.deskReads) return;
      if (!this.item || this.item.escalation_id !== item.escalation_id) return;
      Object.assign(this.item, {notes: item.notes, hand_overs: item.hand_overs,
        takeover_in_minutes: item.takeover_in_minutes, status: item.status, assignee: item.assignee});
      this.renderHolder();
      this.renderNotes();
    } catch {
      // the next event or a reload shows it
    }
  }

  render() {
    const c = this.item;
    this.holderLine = el('p', {class: 'holder-line', 'aria-live': 'polite'});
    this.claimButton = el('button', {type: 'button', onclick: () => this.decide('claim', {})}, 'Claim');
    this.releaseButton = el('button', {type: 'button', id: 'release', class: 'secondary',
      onclick: () => this.decide('release', {})}, 'Release');
    this.takeoverButton = el('button', {type: 'button', id: 'takeover', class: 'secondary',
      onclick: () => this.decide('takeover', {})}, 'Take over');
    this.takeoverHint = el('span', {class: 'hint'});
    this.notesBox = el('section', {class: 'notes-box', 'aria-labelledby': 'notes-title'});
    this.panel = el('section', {class: 'decide', 'aria-labelledby': 'decide-title'});
    this.history = new CustomerHistory({escalationId: c.escalation_id, me: this.me, onError: this.onError});
    this.history.load();
    this.section.replaceChildren();
    append(this.section, [
        el('p', {class: 'back'}, el('a', {href: '#/'}, '← Queue')),
        el('h1', {id: 'case-title', tabindex: -1}, `Escalation #${c.escalation_id}`, ' ',
            el('span', {class: 'reason'}, reasonLabel(c.reason))),
        el('div', {class: 'case-meta'},
            el('span', {}, `${c.channel ?? ''} · from `, el('strong', {}, String(c.sender ?? ''))),
            el('span', {title: c.created_at}, `since ${when(c.created_at)}`),
            el('a', {href: `#/messages/${c.message_id}/trail`, class: 'trail-link', id: 'trail-link'},
                'Trail: the whole story of this message'),
            el('div', {class: 'holder-box'}, this.holderLine, this.claimButton, this.releaseButton,
                this.takeoverButton, this.takeoverHint)),
        this.renderDetail(c.detail),
        el('div', {class: 'case-grid'},
            el('section', {class: 'conversation', 'aria-labelledby': 'conv-title'},
                el('h2', {id: 'conv-title'}, 'Conversation'), this.renderConversation(c), fileList(c.media)),
            this.panel),
        this.notesBox,
        this.history.box,
        this.renderAttempts(c.attempts ?? []),
        this.renderActions(c.actions ?? [])]);
    this.renderHolder();
    this.renderNotes();
    if (CLOSED.has(c.status)) this.renderClosed();
    else this.renderPanel();
  }

  renderHolder() {
    const c = this.item;
    this.holderLine.textContent = holder(c, this.me);
    this.holderLine.className = `holder-line status-${String(c.status).replace(/[^a-z]/g, '')}`;
    // Only an open item can be claimed: the API refuses a claim on someone else's.
    this.claimButton.hidden = c.status !== 'open';
    // The holder may release; someone else may take over an idle claim (the API has the last word).
    const claimed = c.status === 'claimed';
    const mine = claimed && c.assignee === this.me;
    const wait = c.takeover_in_minutes;
    this.releaseButton.hidden = !mine;
    this.takeoverButton.hidden = !claimed || mine || wait !== 0;
    const waiting = claimed && !mine && typeof wait === 'number' && wait > 0;
    this.takeoverHint.textContent = waiting ? `Take-over possible in ${wait} min` : '';
    // No event comes when the claim turns idle: the case is read again once it may have.
    clearTimeout(this.takeoverTimer);
    if (waiting) this.takeoverTimer = setTimeout(() => this.item && this.reloadDesk(), wait * 60000);
  }

  // Staff's internal notes (never sent to the customer) and the hand-overs, with a form to add a note.
  renderNotes() {
    const c = this.item;
    const notes = c.notes ?? [];
    const handOvers = c.hand_overs ?? [];
    const text = el('textarea', {id: 'note-text', rows: 2, required: true, maxlength: 4096});
    const form = el('form', {class: 'card', onsubmit: async (e) => {
      e.preventDefault();
      if (!text.reportValidity()) return;
      try {
        await api('POST', `/api/escalations/${c.escalation_id}/notes`, {text: text.value});
        text.value = '';
        announce('Note added.');
        this.reloadDesk();
      } catch (error) {
        if (error.status !== 401) announce(error.message);
      }
    }},
    el('label', {for: 'note-text'}, 'Add an internal note (staff only, never sent)'), text,
    el('div', {class: 'buttons'}, el('button', {type: 'submit', class: 'secondary'}, 'Add note')));
    // append, not replaceChildren's own arguments: those would show a null as "null".
    this.notesBox.replaceChildren();
    append(this.notesBox, [el('h2', {id: 'notes-title'}, `Internal notes (${notes.length})`),
        notes.length ? el('ul', {class: 'notes', id: 'notes'}, notes.map((n) => el('li', {},
            el('p', {class: 'msg-head'}, el('strong', {}, String(n.author ?? '')), ` · ${when(n.created_at)}`),
            el('p', {class: 'msg-text'}, String(n.text ?? ''))))) : el('p', {class: 'empty'}, 'No notes.'),
        handOvers.length ? el('details', {}, el('summary', {}, `Hand-overs (${handOvers.length})`),
            el('ul', {}, handOvers.map((h) => el('li', {}, `${when(h.at)} · ${h.kind} by ${h.actor}: `,
                `${h.from ?? '-'} → ${h.to ?? 'open'} (${h.rule})`, h.note ? ` · ${h.note}` : '')))) : null,
        form]);
  }

  renderDetail(detail) {
    if (!detail || typeof detail !== 'object') return null;
    const why = typeof detail.why === 'string' ? detail.why :
      typeof detail.attempts === 'number' ? `The model failed ${detail.attempts} attempts.` : null;
    // The whole detail stays one click away: reasons differ in what they record.
    return el('div', {class: 'detail'}, why ? el('p', {}, why) : null,
        el('details', {}, el('summary', {}, 'Escalation detail'), el('pre', {}, JSON.stringify(detail, null, 2))));
  }

  // Inbound messages and what was sent, merged by time (inbound first on a tie).
  renderConversation(c) {
    const entries = [
      ...(c.conversation ?? []).map((m) => ({t: Date.parse(m.received_at), k: 0, node: el('li', {
        class: `msg in${m.message_id === c.message_id ? ' current' : ''}`},
      el('p', {class: 'msg-head'}, el('strong', {}, String(m.sender ?? '')), ` · ${when(m.received_at)}`,
          m.outcome ? ` · ${m.outcome}` : '', m.message_id === c.message_id ? ' · this escalation' : ''),
      el('p', {class: 'msg-text'}, String(m.text ?? '')))})),
      ...(c.sent ?? []).map((s) => ({t: Date.parse(s.updated_at), k: 1, node: el('li', {class: 'msg out'},
          el('p', {class: 'msg-head'}, el('strong', {}, 'Sent'), ` · ${when(s.updated_at)} · ${s.status ?? ''}`,
              s.created_by ? ` · by ${s.created_by}` : ''),
          el('p', {class: 'msg-text'}, String(s.body ?? '')))})),
    ];
    entries.sort((a, b) => ((a.t || 0) - (b.t || 0)) || (a.k - b.k));
    return entries.length ? el('ol', {class: 'thread'}, entries.map((e) => e.node)) :
      el('p', {class: 'empty'}, 'No messages.');
  }

  renderAttempts(attempts) {
    const card = (a) => el('article', {class: `attempt verdict-${String(a.verdict).replace(/[^a-z]/g, '')}`,
      'aria-label': `Attempt ${a.attempt}`},
    el('h3', {}, `Attempt ${a.attempt} `, el('span', {class: 'badge verdict'}, String(a.verdict ?? ''))),
    el('dl', {class: 'facts'},
        fact('Model', [a.provider, a.model].filter(Boolean).join(' / ')),
        fact('Latency', none(a.latency_ms) ? null : `${a.latency_ms} ms`),
        fact('Tokens', none(a.input_tokens) && none(a.output_tokens) ? null :
            `${a.input_tokens ?? '?'} in / ${a.output_tokens ?? '?'} out`),
        fact('Finish', a.finish_reason), fact('Error', a.error_class)),
    el('pre', {class: 'raw', tabindex: 0, 'aria-label': `Raw output of attempt ${a.attempt}`},
        none(a.raw_output) ? '(no output)' : String(a.raw_output)),
    Array.isArray(a.errors) && a.errors.length ? el('ul', {class: 'errors'}, a.errors.map((e) => el('li', {},
        el('code', {class: 'pointer'}, e.path ? String(e.path) : '(whole reply)'), ' ',
        el('span', {}, String(e.message ?? '')), ' ', el('small', {}, String(e.code ?? ''))))) :
      el('p', {class: 'hint'}, 'No validator errors.'));
    return el('section', {class: 'attempts-box', 'aria-labelledby': 'attempts-title'},
        el('h2', {id: 'attempts-title'}, `Model attempts (${attempts.length})`),
        attempts.length ? el('div', {class: 'attempts'}, attempts.map(card)) : el('p', {class: 'empty'}, 'None.'));
  }

  renderActions(actions) {
    if (!actions.length) return null;
    return el('section', {class: 'actions-box', 'aria-labelledby': 'actions-title'},
        el('h2', {id: 'actions-title'}, 'Actions for this message'),
        el('ul', {class: 'actions'}, actions.map((a) => el('li', {},
            el('strong', {}, String(a.action ?? '')), ` · ${a.status ?? ''}`, a.created_by ? ` · by ${a.created_by}` : '',
            a.recipient ? ` · to ${a.recipient}` : '',
            a.body ? el('p', {class: 'msg-text'}, String(a.body)) : null,
            a.error ? el('p', {class: 'error'}, String(a.error)) : null))));
  }

  // The proposal when there is one, else the last attempt's output when it is an object,
  // else nothing (the form then puts the sender in the recipient field).
  prefill() {
    if (this.item.proposed_action && typeof this.item.proposed_action === 'object') return this.item.proposed_action;
    const attempts = this.item.attempts ?? [];
    return (attempts.length && parseRawOutput(attempts[attempts.length - 1].raw_output)) || {};
  }

  renderPanel() {
    const c = this.item;
    this.topError = el('div', {class: 'error', role: 'alert', id: 'decide-error'});
    const closed = windowClosed(c);
    const approved = approvedTemplates(c);
    const prefill = {...this.prefill()};
    const field = this.catalog.action_field;
    const proposesTemplate = (c.templates ?? []).some((t) => t.action === prefill[field]);
    // A free-form proposal cannot go while the window is closed: start on a template instead.
    if (closed && approved.length && !proposesTemplate) prefill[field] = approved[0].action;
    this.form = new ActionForm(this.catalog, prefill, c.sender);
    const templateBox = el('div', {class: 'template-note', id: 'template-note', 'aria-live': 'polite'});
    this.form.onSwitch = (action) => {
      templateBox.replaceChildren();
      append(templateBox, templateNote(c, action?.name));
    };
    this.form.onSwitch(this.form.action());
    const canApprove = c.proposed_action && (!closed || proposesTemplate);
    const actionForm = el('form', {class: 'card', id: 'action-form', novalidate: true, onsubmit: (e) => {
      e.preventDefault();
      if (this.form.check()) this.decide('edit', {action: this.form.value()});
    }},
    el('h3', {}, closed && !proposesTemplate ? 'Send a template' : c.proposed_action ? 'The proposed action' : 'Action'),
    closed && !proposesTemplate ? el('p', {class: 'hint'}, approved.length ?
      'The proposal was free-form text, which cannot reach the customer now: the form starts on an approved template.' :
      'No template action of the catalog is approved now: nothing can reach the customer until they write again.') :
      c.proposed_action ? null : el('p', {class: 'hint'}, 'Nothing was proposed: write the action here.'),
    this.form.element,
    templateBox,
    el('div', {class: 'buttons'},
        canApprove ? el('button', {type: 'button', id: 'approve', onclick: () => this.decide('approve', {})},
            'Approve as proposed') : null,
        el('button', {type: 'submit', id: 'edit-approve'}, canApprove ? 'Edit & approve' : 'Approve this action')));
    const replyText = el('textarea', {id: 'reply-text', rows: 3, required: true, maxlength: 4096, disabled: closed});
    const replyForm = el('form', {class: 'card', onsubmit: (e) => {
      e.preventDefault();
      if (replyText.reportValidity()) this.decide('reply', {text: replyText.value});
    }},
    el('h3', {}, 'Reply in your own words'),
    closed ? el('p', {class: 'hint', id: 'reply-closed'},
        'Free-form replies cannot reach the customer while the reply window is closed.') : this.savedPicker(replyText),
    el('label', {for: 'reply-text'}, `Message to ${c.sender ?? 'the customer'}`), replyText,
    el('div', {class: 'buttons'}, el('button', {type: 'submit', class: 'secondary', disabled: closed}, 'Send reply')));
    const note = el('input', {id: 'dismiss-note', required: true, maxlength: 500});
    const dismissForm = el('form', {class: 'card', onsubmit: (e) => {
      e.preventDefault();
      if (note.reportValidity()) this.decide('dismiss', {note: note.value});
    }},
    el('h3', {}, 'Dismiss'),
    el('label', {for: 'dismiss-note'}, 'Note (why nothing is sent)'), note,
    el('div', {class: 'buttons'}, el('button', {type: 'submit', class: 'danger'}, 'Dismiss')));
    this.panel.replaceChildren();
    append(this.panel, [el('h2', {id: 'decide-title'}, 'Decide'), windowLine(c.window), this.topError, actionForm,
      replyForm, dismissForm]);
  }

  // A select of the saved replies (none: nothing shown); a choice fills `textarea`.
  savedPicker(textarea) {
    if (!this.saved?.length) return null;
    const select = el('select', {id: 'saved-reply', onchange: () => {
      const chosen = this.saved.find((r) => String(r.id) === select.value);
      if (chosen) textarea.value = String(chosen.text ?? '');
    }}, el('option', {value: ''}, 'Write my own'),
    this.saved.map((r) => el('option', {value: String(r.id)}, String(r.name ?? ''))));
    return el('div', {class: 'saved-replies'}, el('label', {for: 'saved-reply'}, 'Saved reply'), select);
  }

  renderClosed() {
    const c = this.item;
    this.panel.replaceChildren(el('h2', {id: 'decide-title'}, 'Decided'),
        el('p', {class: 'notice'}, holder(c, this.me), c.resolution ? `: ${c.resolution}` : '.'));
  }

  async decide(verb, body) {
    const id = this.item.escalation_id;
    this.form?.clearErrors();
    if (this.topError) this.topError.replaceChildren();
    // Those off for a reason of their own (a closed window's reply) stay off after.
    const buttons = [...this.section.querySelectorAll('button')].filter((b) => !b.disabled);
    for (const b of buttons) b.disabled = true;
    try {
      await api('POST', `/api/escalations/${id}/${verb}`, body);
      if (verb === 'claim' || verb === 'takeover') {
        this.item.status = 'claimed';
        this.item.assignee = this.me;
        this.renderHolder();
        announce(`You hold escalation #${id}.`);
        if (verb === 'takeover') this.reloadDesk();
      } else if (verb === 'release') {
        this.item.status = 'open';
        this.item.assignee = null;
        this.item.takeover_in_minutes = null;
        this.renderHolder();
        announce(`Escalation #${id} released.`);
        this.reloadDesk();
      } else {
        announce(`Escalation #${id} ${DONE[verb] ?? verb}.`);
        this.onDecided(id);
        location.hash = '#/';
      }
    } catch (error) {
      this.showRefusal(error);
    } finally {
      for (const b of buttons) b.disabled = false;
    }
  }

  // The general error on top; each validator error at its field (the rest on top too).
  showRefusal(error) {
    if (error.status === 401) return;
    const verdict = error.body?.verdict;
    const unplaced = verdict && this.form ? this.form.showErrors(verdict.errors) : [];
    const box = this.topError ?? this.section;
    box.replaceChildren(el('p', {}, error.message));
    if (unplaced.length) {
      box.append(el('ul', {}, unplaced.map((e) => el('li', {}, el('code', {}, String(e.path ?? '')), ' ',
          String(e.message ?? '')))));
    }
    if (!verdict || !verdict.errors?.length || unplaced.length) box.scrollIntoView({block: 'nearest'});
    if (error.status === 409 && !verdict) this.refresh();
  }

  // After a refusal by state (someone else decided), the holder and status shown again.
  async refresh() {
    try {
      const item = await api('GET', `/api/escalations/${this.item.escalation_id}`);
      this.update(item);
    } catch {
      // the refusal is on screen already
    }
  }
}

const none = (value) => value === null || value === undefined;

function fact(name, value) {
  if (none(value) || value === '') return null;
  return [el('dt', {}, name), el('dd', {}, String(value))];
}
