// One message's trail (route #/messages/{id}/trail, GET /api/messages/{id}/trail): the
// same content as `dispatchctl trail`: the message, its files, the context the model was
// given as far as it is stored, every attempt, the decision, the outbox, the escalations, staff actions
// and the audit events with whether the hash chain verifies across them.
import {api} from './api.js';
import {$, append, el, reasonLabel, when} from './dom.js';

const none = (value) => value === null || value === undefined;
const text = (value) => (none(value) ? '–' : String(value));
const json = (value) => (typeof value === 'string' ? value : JSON.stringify(value));

function table(caption, head, rows) {
  if (!rows.length) return el('p', {class: 'empty'}, 'None.');
  return el('div', {class: 'table-scroll'}, el('table', {class: 'trail-table'},
      el('caption', {class: 'visually-hidden'}, caption),
      el('thead', {}, el('tr', {}, head.map((h) => el('th', {scope: 'col'}, h)))),
      el('tbody', {}, rows.map((cells) => el('tr', {}, cells.map((c) => el('td', {}, c)))))));
}

function section(id, title, ...children) {
  return el('section', {class: 'trail-part', 'aria-labelledby': id}, el('h2', {id}, title), ...children);
}

function pre(value, label) {
  return el('pre', {class: 'raw', tabindex: 0, 'aria-label': label}, String(value ?? ''));
}

export class TrailView {
  constructor({onError}) {
    this.onError = onError;
    this.section = $('trail');
  }

  async open(id) {
    this.section.replaceChildren(el('p', {class: 'loading'}, `Loading the trail of message #${id}…`));
    try {
      this.render(await api('GET', `/api/messages/${id}/trail`));
    } catch (error) {
      this.section.replaceChildren(el('h1', {id: 'trail-title', tabindex: -1}, `Trail of message #${id}`),
          el('p', {class: 'error'}, error.status === 404 ? 'There is no such message.' : error.message),
          el('p', {}, el('a', {href: '#/'}, 'Back to the queue')));
      if (error.status !== 404) this.onError(error);
    }
    $('trail-title')?.focus();
  }

  render(t) {
    const m = t.message;
    const escalation = (t.escalations ?? [])[0];
    this.section.replaceChildren();
    append(this.section, [
      el('p', {class: 'back'}, el('a', {href: '#/'}, '← Queue'),
          escalation ? [' · ', el('a', {href: `#/escalations/${escalation.escalation_id}`},
              `Escalation #${escalation.escalation_id}`)] : null),
      el('h1', {id: 'trail-title', tabindex: -1}, `Trail of message #${m.message_id}`),
      el('dl', {class: 'facts'}, [['Channel', m.channel], ['Provider message id', m.provider_message_id],
        ['Sender', m.sender], ['Received', when(m.received_at)], ['State', m.state], ['Outcome', m.outcome]]
          .map(([k, v]) => [el('dt', {}, k), el('dd', {}, text(v))])),
      section('trail-inbound', 'Inbound message', pre(m.text, 'Inbound message')),
      this.files(t),
      this.context(t),
      this.attempts(t),
      section('trail-decision', 'Decision', el('p', {}, String(t.decision?.summary ?? ''))),
      this.outbox(t),
      this.escalations(t),
      section('trail-staff', 'Staff actions', table('Staff actions', ['Audit id', 'At', 'Who', 'Event', 'Detail'],
          (t.staff_actions ?? []).map((a) => [text(a.audit_id), when(a.at), text(a.actor), text(a.event),
            el('code', {}, json(a.detail))]))),
      this.audit(t),
    ]);
  }

  context(t) {
    const c = t.context ?? {};
    return section('trail-context', 'Context given to the model', el('p', {class: 'hint'}, String(c.note ?? '')),
        el('h3', {}, `History (${(c.history ?? []).length} of at most ${c.history_limit ?? '?'})`),
        (c.history ?? []).length ? el('ol', {class: 'thread'}, c.history.map((h) => el('li',
            {class: `msg ${h.from === 'us' ? 'out' : 'in'}`},
            el('p', {class: 'msg-head'}, el('strong', {}, h.from === 'us' ? 'Sent' : 'Customer'), ` · ${when(h.at)}`),
            el('p', {class: 'msg-text'}, String(h.text ?? ''))))) : el('p', {class: 'empty'}, 'No history.'),
        table('Request summaries', ['Attempt', 'Request summary'],
            (t.attempts ?? []).map((a) => [text(a.attempt), el('code', {}, text(a.request_summary))])));
  }

  attempts(t) {
    const list = t.attempts ?? [];
    const card = (a) => el('article', {class: `attempt verdict-${String(a.verdict).replace(/[^a-z]/g, '')}`},
        el('h3', {}, `Attempt ${a.attempt} `, el('span', {class: 'badge verdict'}, text(a.verdict)),
            a.tool_call ? el('span', {class: 'badge'}, 'tool call') : null),
        none(a.raw_output) ? el('p', {class: 'hint'}, 'No output (the call failed).') :
          pre(a.raw_output, `Raw output of attempt ${a.attempt}`),
        (a.repairs ?? []).length ? el('ul', {class: 'repairs'}, a.repairs.map((r) => el('li', {},
            el('small', {}, String(r.code)), ' ', String(r.message)))) : el('p', {class: 'hint'}, 'No repairs.'),
        Array.isArray(a.errors) && a.errors.length ? el('ul', {class: 'errors'}, a.errors.map((e) => el('li', {},
            el('code', {class: 'pointer'}, e.path ? String(e.path) : '(whole reply)'), ' ',
            String(e.message ?? ''), ' ', el('small', {}, String(e.code ?? ''))))) :
          el('p', {class: 'hint'}, 'No validator errors.'));
    const tools = t.tool_calls ?? [];
    return [section('trail-attempts', `Attempts (${list.length})`,
        table('Attempts', ['#', 'At', 'Model', 'Verdict', 'Error', 'Latency ms', 'Tokens in / out', 'Finish'],
            list.map((a) => [text(a.attempt), when(a.created_at), `${a.provider} / ${a.model}`, text(a.verdict),
              text(a.error_class), text(a.latency_ms), `${text(a.input_tokens)} / ${text(a.output_tokens)}`,
              text(a.finish_reason)])),
        list.length ? el('div', {class: 'attempts'}, list.map(card)) : null),
    section('trail-tools', 'Tool calls', tools.length ?
        el('ul', {}, tools.map((c) => el('li', {}, `Attempt ${c.attempt}: `, el('code', {}, text(c.call)),
            ' — the tool\'s answer is not stored.'))) : el('p', {class: 'empty'}, 'None.'))];
  }

  // The message's files: a kept one links to its bytes (shown or downloaded as the server says).
  files(t) {
    return section('trail-files', 'Files', table('Files',
        ['Media id', 'Kind', 'Name', 'State', 'Declared type', 'Sniffed type', 'Size', 'sha256', 'Reason'],
        (t.media ?? []).map((f) => [
          f.state === 'stored' ? el('a', {href: `/api/media/${Number(f.media_id)}`}, text(f.media_id)) :
            text(f.media_id),
          f.voice ? `${text(f.kind)} (voice note)` : text(f.kind), text(f.filename), text(f.state),
          text(f.declared_type),
          f.type_mismatch ? `${text(f.sniffed_type)} (not the declared type)` : text(f.sniffed_type),
          text(f.size), el('code', {class: 'hash'}, text(f.sha256)), text(f.reason)])));
  }

  outbox(t) {
    return section('trail-outbox', 'Outbox', table('Outbox',
        ['Action', 'Name', 'Status', 'By', 'Recipient', 'Provider message id', 'Deliveries', 'Body'],
        (t.actions ?? []).map((a) => [text(a.action_id), text(a.action), text(a.status), text(a.created_by),
          text(a.recipient), text(a.provider_message_id),
          (a.deliveries ?? []).map((d) => `${d.status} ${when(d.at)}`).join(', ') || '–',
          a.error ? [text(a.body), el('p', {class: 'error'}, String(a.error))] : text(a.body)])));
  }

  escalations(t) {
    return section('trail-escalations', 'Escalations', table('Escalations',
        ['#', 'Reason', 'Status', 'Held by', 'Resolution', 'Opened', 'Resolved', 'Internal notes'],
        (t.escalations ?? []).map((e) => [el('a', {href: `#/escalations/${e.escalation_id}`}, `#${e.escalation_id}`),
          reasonLabel(e.reason), text(e.status), text(e.assignee), text(e.resolution), when(e.created_at),
          none(e.resolved_at) ? '–' : when(e.resolved_at),
          (e.notes ?? []).map((n) => `${n.author}: ${n.text}`).join(' · ') || '–'])));
  }

  audit(t) {
    const c = t.chain;
    const verdict = !c ? el('p', {class: 'hint'}, 'No audit events: nothing to verify.') : c.verified ?
      el('p', {class: 'chain ok', id: 'trail-chain'},
          `The chain verifies across audit ids ${c.from} to ${c.to} (${c.events} events).`) :
      el('p', {class: 'chain broken error', id: 'trail-chain', role: 'alert'},
          `The chain does NOT verify across audit ids ${c.from} to ${c.to}: broken at audit id ${c.first_broken}: ` +
          `${c.reason}.`);
    return section('trail-audit', 'Audit events', verdict, table('Audit events',
        ['Audit id', 'At', 'Event', 'Actor', 'Detail', 'Hash'],
        (t.audit ?? []).map((a) => [text(a.audit_id), when(a.at), text(a.event), text(a.actor),
          el('code', {}, json(a.detail)), el('code', {class: 'hash', title: `previous: ${a.prev_hash}`}, text(a.hash))])));
  }
}
