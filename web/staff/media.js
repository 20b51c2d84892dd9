// A message's files (the case's `media`): a photo shown in the page (click: the full size),
// an audio file with a player, anything else a download link with its name, type and size,
// and a file not kept with why. The bytes come from GET /api/media/{id} on this origin, with
// the session cookie as every other call; how a file may be shown is the server's word
// (`display`), never the customer's: a file is an <img> or an <audio> only when the server
// says "image" or "audio", and it serves those inline only then (SVG and HTML never).
import {el} from './dom.js';

// Why a file has no bytes to show, by its state (docs/media.md).
const NOT_KEPT = {
  pending: 'not downloaded yet',
  over_cap: 'not kept: too large',
  unfetchable: 'not kept: the channel could not give it',
  expired: 'not kept: expired at the channel',
  mismatch: 'not kept: its checksum was not the one the channel declared',
  purged: 'removed after the retention period',
  erased: 'erased with the customer\'s data',
};
const KIND = {image: 'Image', audio: 'Audio', video: 'Video', document: 'Document', sticker: 'Sticker'};

// "812 bytes", "4.2 KB", "3.1 MB".
export function fileSize(bytes) {
  if (typeof bytes !== 'number' || bytes < 0) return '';
  if (bytes < 1000) return `${bytes} byte${bytes === 1 ? '' : 's'}`;
  if (bytes < 1e6) return `${(bytes / 1e3).toFixed(1)} KB`;
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

const str = (value) => (value === null || value === undefined ? '' : String(value));

function kindOf(file) {
  return file.voice ? 'Voice note' : (KIND[file.kind] ?? str(file.kind));
}

// What the customer called it, else "Document 12".
function nameOf(file) {
  return str(file.filename) || `${kindOf(file)} ${file.media_id}`;
}

// Kind, type and size, and a warning when the bytes are not the type declared.
function facts(file) {
  const parts = [kindOf(file), str(file.content_type), fileSize(file.size)].filter(Boolean);
  return [el('span', {class: 'file-facts'}, parts.join(' · ')),
    file.type_mismatch ? el('span', {class: 'hint warn file-mismatch'},
        ` The bytes are ${str(file.sniffed_type) || 'of no known type'}, not ${str(file.content_type)}.`) : null];
}

function fileItem(file) {
  const id = Number(file.media_id);
  const url = `/api/media/${id}`;
  const attrs = {class: `file shown-as-${str(file.display) || 'none'}`, 'data-media-id': id};
  if (!Number.isSafeInteger(id) || id <= 0) return null;
  if (file.display === 'image') {
    return el('li', attrs, el('figure', {},
        el('a', {href: url, target: '_blank', rel: 'noopener', title: 'Open the full size'},
            el('img', {src: url, class: 'file-image', alt: `${kindOf(file)} from the customer`})),
        el('figcaption', {}, facts(file))));
  }
  if (file.display === 'audio') {
    return el('li', attrs, el('figure', {},
        el('audio', {src: url, controls: true, preload: 'metadata', class: 'file-audio',
          'aria-label': `${kindOf(file)} from the customer`}),
        el('figcaption', {}, facts(file))));
  }
  if (file.display === 'download') {
    return el('li', attrs, el('a', {href: url, download: true, class: 'file-download'}, `Download ${nameOf(file)}`),
        ' ', facts(file));
  }
  const why = NOT_KEPT[file.state] ?? str(file.state);
  return el('li', attrs, el('strong', {}, nameOf(file)), ' ', facts(file),
      el('p', {class: 'file-state'}, `${why}${file.reason ? ` (${str(file.reason)})` : ''}`));
}

// The list, or null when the message has no files.
export function fileList(files) {
  if (!Array.isArray(files) || !files.length) return null;
  return el('div', {class: 'files', id: 'files'},
      el('h3', {id: 'files-title'}, `Files (${files.length})`),
      el('ul', {class: 'file-list', 'aria-labelledby': 'files-title'}, files.map(fileItem)));
}
