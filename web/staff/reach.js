// Whether the customer can be reached with free-form text now (the case's "window") and, when
// not, the templates that still reach them (the case's "templates": the catalog's template
// actions with their stored template). Shown in the decision panel: a closed window turns
// the action form to the first approved template action, and the form's template action
// shows its template's text and which field fills which parameter.
import {el, when} from './dom.js';

// The line about the window; null for a channel without one.
export function windowLine(window) {
  if (!window || typeof window !== 'object') return null;
  const closes = window.closes_at ? when(window.closes_at) : null;
  const text = window.open ?
    `Reply window open until ${closes}: free-form replies reach the customer.` :
    closes ? `Reply window closed since ${closes}: only an approved template reaches the customer now.` :
      'No reply window: the customer never wrote, only an approved template reaches them.';
  return el('p', {id: 'reply-window', class: `window ${window.open ? 'open' : 'closed'}`, role: 'note'}, text);
}

export const windowClosed = (item) => Boolean(item.window && item.window.open === false);

export const approvedTemplates = (item) => (item.templates ?? []).filter((t) => t.approved === true);

// The template's text by component as stored (HEADER, BODY, FOOTER, buttons' texts).
function templateLines(offer) {
  const lines = [];
  for (const c of Array.isArray(offer.components) ? offer.components : []) {
    const type = String(c?.type ?? '').toLowerCase();
    if (typeof c?.text === 'string') lines.push(`${type}: ${c.text}`);
    else if (type === 'header' && c?.format) lines.push(`header: ${String(c.format).toLowerCase()}`);
    for (const b of Array.isArray(c?.buttons) ? c.buttons : []) {
      lines.push(`button: ${String(b?.text ?? '')}${b?.url ? ` (${b.url})` : ''}`);
    }
  }
  return lines;
}

// What the selected action sends when it is a template action: its template, status and
// text, and the field behind each parameter; empty for any other action.
export function templateNote(item, actionName) {
  const offer = (item.templates ?? []).find((t) => t.action === actionName);
  if (!offer) return [];
  const status = offer.status ?? 'not listed by the channel';
  const fills = (offer.parameters ?? []).map((p) =>
    `${p.part}${p.part === 'button' ? ` ${p.button}` : ''} {{${p.name}}} ← ${p.field}`);
  return [
    el('p', {class: `template-status ${offer.approved ? 'approved' : 'refused'}`},
        `Template ${offer.template} (${offer.language}): ${status}`, offer.category ? `, ${offer.category}` : '',
        offer.approved ? '' : ' — it cannot be sent now.'),
    el('pre', {class: 'template-text', 'aria-label': `The text of template ${offer.template}`},
        templateLines(offer).join('\n')),
    fills.length ? el('p', {class: 'hint'}, `Parameters: ${fills.join('; ')}`) : null,
  ];
}
