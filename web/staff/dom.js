// DOM helpers. Nothing here ever parses a string as HTML: every piece of data becomes a
// text node or one attribute set by name, so customer text (or any string the server sends)
// cannot turn into markup, a script or an event handler.

// el('a', {href: '#/', class: 'x', onclick: fn}, 'text', otherNode, [more]) -> the element.
// A function value is an event listener; true sets an empty attribute; null, undefined and
// false leave the attribute out.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === 'function') node.addEventListener(key.replace(/^on/, ''), value);
    else if (key === 'class') node.className = value;
    else if (value === true) node.setAttribute(key, '');
    else node.setAttribute(key, String(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of [children].flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

export const $ = (id) => document.getElementById(id);

// The polite status line at the top (role=status): what just happened, for everyone.
export function announce(text) {
  const status = $('status');
  status.textContent = text;
  status.classList.toggle('shown', Boolean(text));
}

// "just now", "3 min", "2 h", "4 d" between an ISO time and now.
export function age(iso, now = Date.now()) {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return '';
  const minutes = Math.max(0, Math.floor((now - then) / 60000));
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h`;
  return `${Math.floor(hours / 24)} d`;
}

// A local date and time for a tooltip or a timeline entry.
export function when(iso) {
  const then = Date.parse(iso);
  return Number.isNaN(then) ? String(iso ?? '') : new Date(then).toLocaleString();
}

export const reasonLabel = (reason) => String(reason ?? '').replaceAll('_', ' ');

export function firstLine(text) {
  const line = String(text ?? '').split('\n', 1)[0];
  return line.length > 160 ? `${line.slice(0, 159)}…` : line;
}

// "Claimed by ana (you)", "Open", "Resolved by bo": who holds an item, in words.
export function holder(item, me) {
  const who = item.assignee ? `${item.assignee}${item.assignee === me ? ' (you)' : ''}` : '';
  switch (item.status) {
    case 'open': return 'Open';
    case 'claimed': return `Claimed by ${who || 'someone'}`;
    case 'resolved': return who ? `Resolved by ${who}` : 'Resolved';
    case 'dismissed': return who ? `Dismissed by ${who}` : 'Dismissed';
    default: return String(item.status ?? '');
  }
}
