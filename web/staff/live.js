// Live updates over Server-Sent Events (GET /api/events). EventSource reconnects by itself
// after a dropped connection (a daemon restart); events sent meanwhile are lost, so every
// reconnection after an error asks for a full reload. An answer other than 200 (the
// session ended) closes the source for good: then the session is checked and the source
// opened again, or the login form shown.
import {$} from './dom.js';

const LABELS = {live: 'live', reconnecting: 'reconnecting…', off: 'offline'};

function parse(data) {
  try {
    const event = JSON.parse(data);
    return event && Number.isInteger(event.escalation_id) ? event : null;
  } catch {
    return null;
  }
}

export class Live {
  // handlers: created(event), updated(event), resync() after missed events, closed() when
  // the server refused the stream.
  constructor(handlers) {
    this.handlers = handlers;
    this.source = null;
    this.retry = null;
  }

  start() {
    if (this.source) return;
    clearTimeout(this.retry);
    const source = new EventSource('/api/events');
    let failed = false;
    source.addEventListener('open', () => {
      this.indicate('live');
      if (failed) this.handlers.resync();
      failed = false;
    });
    source.addEventListener('error', () => {
      failed = true;
      this.indicate('reconnecting');
      if (source.readyState === EventSource.CLOSED) {
        this.source = null;
        this.retry = setTimeout(() => this.handlers.closed(), 3000);
      }
    });
    for (const [name, handler] of [['escalation.created', 'created'], ['escalation.updated', 'updated']]) {
      source.addEventListener(name, (e) => {
        const event = parse(e.data);
        if (event) this.handlers[handler](event);
      });
    }
    this.source = source;
  }

  stop() {
    clearTimeout(this.retry);
    this.source?.close();
    this.source = null;
    this.indicate('off');
  }

  indicate(state) {
    const node = $('live');
    node.dataset.state = state;
    node.textContent = LABELS[state];
  }
}
