// The action form, built from GET /api/catalog: an action select, then the fields that
// action uses. Enums are selects, lengths are maxlength/minlength with a counter, required
// fields are marked, grounded fields carry a badge. value() gives the reply object in the
// catalog's format; showErrors() puts each validator error next to the field its JSON
// pointer names.
import {el} from './dom.js';

const GROUNDING = {
  reject: "must appear in the customer's message",
  review: "checked against the customer's message",
};

// The first token of a JSON pointer ("/prioridad" -> "prioridad"), decoded (RFC 6901).
export function pointerField(path) {
  if (typeof path !== 'string' || !path.startsWith('/')) return null;
  return path.slice(1).split('/')[0].replaceAll('~1', '/').replaceAll('~0', '~');
}

// A model's raw output as an object when it is one: the text itself, the inside of a ```
// fence, or the outermost {...} in it. Anything else is null.
export function parseRawOutput(raw) {
  if (typeof raw !== 'string') return null;
  const text = raw.trim();
  const fenced = /^```[A-Za-z]*\s*([\s\S]*?)\s*```$/.exec(text);
  const candidates = [fenced ? fenced[1] : text];
  const first = text.indexOf('{');
  const last = text.lastIndexOf('}');
  if (first >= 0 && last > first) candidates.push(text.slice(first, last + 1));
  for (const candidate of candidates) {
    try {
      const value = JSON.parse(candidate);
      if (value && typeof value === 'object' && !Array.isArray(value)) return value;
    } catch {
      // not JSON: the next candidate, or nothing to prefill
    }
  }
  return null;
}

let formCount = 0;

export class ActionForm {
  // catalog: GET /api/catalog; prefill: an object in the catalog's format (may be {});
  // sender: the customer, put in the recipient field when the prefill has none.
  constructor(catalog, prefill, sender) {
    this.catalog = catalog;
    this.sender = sender;
    this.fields = new Map((catalog.fields ?? []).map((f) => [f.name, f]));
    this.prefix = `af${++formCount}`;
    this.values = {...prefill};
    this.controls = new Map();
    const actions = catalog.actions ?? [];
    const wanted = prefill?.[catalog.action_field];
    const initial = actions.find((a) => a.name === wanted) ?? actions[0];

    this.actionSelect = el('select', {id: `${this.prefix}-action`, required: true, onchange: () => this.switchAction()},
        actions.map((a) => el('option', {value: a.name, selected: a === initial}, a.name)));
    this.actionHelp = el('p', {class: 'hint', id: `${this.prefix}-action-help`});
    this.actionError = el('p', {class: 'field-error', id: `${this.prefix}-action-error`});
    this.actionSelect.setAttribute('aria-describedby', `${this.actionHelp.id} ${this.actionError.id}`);
    this.fieldBox = el('div', {class: 'fields'});
    this.element = el('div', {class: 'action-form'},
        el('p', {class: 'hint'}, 'Fields marked ', el('span', {class: 'req'}, '*'), ' are required.'),
        el('div', {class: 'field', 'data-field': catalog.action_field},
            el('label', {for: this.actionSelect.id}, 'Action', el('span', {class: 'req', 'aria-hidden': 'true'}, ' *')),
            this.actionSelect, this.actionHelp, this.actionError),
        this.fieldBox);
    if (wanted !== undefined && wanted !== initial?.name) {
      this.actionError.textContent = `The model chose "${String(wanted)}", which is not in the catalog.`;
    }
    this.switchAction();
  }

  action() {
    return (this.catalog.actions ?? []).find((a) => a.name === this.actionSelect.value);
  }

  // Rebuilds the fields for the selected action, keeping what was typed in fields that
  // the new action also has; then onSwitch(action), when set.
  switchAction() {
    for (const [name, control] of this.controls) this.values[name] = this.read(name, control.input);
    const action = this.action();
    this.actionHelp.textContent = action?.description ?? '';
    this.controls.clear();
    this.fieldBox.replaceChildren();
    if (!action) return;
    const required = new Set(action.required ?? []);
    const names = [...(action.required ?? []), ...(action.optional ?? [])];
    if (action.recipient_field && (this.values[action.recipient_field] ?? '') === '' && this.sender) {
      this.values[action.recipient_field] = this.sender;
    }
    names.forEach((name, i) => {
      const spec = this.fields.get(name) ?? {name, type: 'string'};
      const control = this.buildField(spec, `${this.prefix}-f${i}`, required.has(name), name === action.text_field);
      this.controls.set(name, control);
      this.fieldBox.append(control.wrap);
    });
    this.onSwitch?.(action);
  }

  // Selects action `name` (when the catalog has it), as picking it from the select does.
  choose(name) {
    if (!(this.catalog.actions ?? []).some((a) => a.name === name)) return;
    this.actionSelect.value = name;
    this.switchAction();
  }

  buildField(spec, id, required, isText) {
    const value = this.values[spec.name];
    const help = el('p', {class: 'hint', id: `${id}-help`}, spec.description ?? '');
    const error = el('p', {class: 'field-error', id: `${id}-error`});
    const common = {id, name: spec.name, required, 'aria-describedby': `${id}-help ${id}-error`};
    let input;
    let note = null;
    if (Array.isArray(spec.enum)) {
      const known = spec.enum.some((v) => v === value);
      input = el('select', common,
          el('option', {value: '', selected: !known}, 'Choose…'),
          spec.enum.map((v) => el('option', {value: String(v), selected: v === value}, String(v))));
      if (!known && value !== undefined && value !== null && value !== '') {
        note = el('p', {class: 'hint warn'}, `The model wrote "${String(value)}", which is not one of the choices.`);
      }
    } else if (spec.type === 'boolean') {
      input = el('select', common, el('option', {value: ''}, 'Choose…'),
          ['true', 'false'].map((v) => el('option', {value: v, selected: String(value) === v}, v)));
    } else if (spec.type === 'integer' || spec.type === 'number') {
      input = el('input', {...common, type: 'number', inputmode: 'decimal', step: spec.type === 'integer' ? 1 : 'any',
        min: spec.minimum, max: spec.maximum, value: value ?? ''});
    } else {
      const long = isText || (spec.max_length ?? 0) > 200;
      const attrs = {...common, maxlength: spec.max_length, minlength: spec.min_length,
        placeholder: spec.date ? 'YYYY-MM-DD' : null};
      input = long ? el('textarea', {...attrs, rows: 4}) : el('input', {...attrs, type: 'text'});
      input.value = typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value);
    }
    const badges = [];
    if (GROUNDING[spec.grounding]) badges.push(el('span', {class: 'badge grounded'}, GROUNDING[spec.grounding]));
    if (spec.date) badges.push(el('span', {class: 'badge'}, 'date'));
    const counter = this.counter(spec, input);
    const wrap = el('div', {class: 'field', 'data-field': spec.name},
        el('label', {for: id}, spec.name, required ? el('span', {class: 'req', 'aria-hidden': 'true'}, ' *') : null),
        badges.length ? el('div', {class: 'badges'}, badges) : null,
        help, input, counter, note, error);
    return {wrap, input, error, spec};
  }

  // "12 / 4096" under a field with a length limit, kept current while typing.
  counter(spec, input) {
    if (spec.max_length === undefined && spec.min_length === undefined) return null;
    if (input.tagName === 'SELECT') return null;
    const out = el('p', {class: 'counter'});
    const update = () => {
      const n = [...input.value].length;
      const limits = [spec.min_length !== undefined ? `at least ${spec.min_length}` : null,
        spec.max_length !== undefined ? `at most ${spec.max_length}` : null].filter(Boolean).join(', ');
      out.textContent = `${n} characters (${limits})`;
      out.classList.toggle('over', (spec.max_length !== undefined && n > spec.max_length) ||
          (spec.min_length !== undefined && n > 0 && n < spec.min_length));
    };
    input.addEventListener('input', update);
    update();
    return out;
  }

  // One field's value in its catalog type; a number that does not parse stays text so
  // that the validator (not the page) says what is wrong with it.
  read(name, input) {
    const spec = this.fields.get(name) ?? {type: 'string'};
    const raw = input.value;
    if (raw === '') return undefined;
    if (spec.type === 'boolean') return raw === 'true';
    if (spec.type === 'integer' || spec.type === 'number') {
      const n = Number(raw);
      return Number.isFinite(n) ? n : raw;
    }
    return raw;
  }

  // The reply object in the catalog's format (empty optional fields left out).
  value() {
    const out = {[this.catalog.action_field]: this.actionSelect.value};
    for (const [name, control] of this.controls) {
      const v = this.read(name, control.input);
      if (v !== undefined || control.input.required) out[name] = v ?? '';
    }
    return out;
  }

  // Whether the browser's own checks (required, lengths, ranges) pass; shows them if not.
  check() {
    const inputs = [this.actionSelect, ...[...this.controls.values()].map((c) => c.input)];
    return inputs.every((input) => input.reportValidity());
  }

  clearErrors() {
    this.actionError.textContent = '';
    this.actionSelect.removeAttribute('aria-invalid');
    for (const control of this.controls.values()) {
      control.error.textContent = '';
      control.input.removeAttribute('aria-invalid');
    }
  }

  // Puts each {path, code, message} next to the field its pointer names; returns the
  // errors that name no field of this form (the caller shows them on top).
  showErrors(errors) {
    const unplaced = [];
    let first = null;
    for (const error of errors ?? []) {
      const name = pointerField(error.path);
      const control = name === this.catalog.action_field ?
        {input: this.actionSelect, error: this.actionError} : this.controls.get(name);
      if (!control) {
        unplaced.push(error);
        continue;
      }
      const line = String(error.message ?? error.code ?? 'invalid');
      control.error.textContent = control.error.textContent ? `${control.error.textContent} ${line}` : line;
      control.input.setAttribute('aria-invalid', 'true');
      first ??= control.input;
    }
    first?.focus();
    return unplaced;
  }
}
