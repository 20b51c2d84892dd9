-- WhatsApp message templates (docs/channels.md, "Templates"): the business's templates as the
-- Graph API lists them (GET {waba-id}/message_templates), refreshed periodically and changed
-- at once by the message_template_status_update and template_category_update webhooks. One
-- row per name and language, as WhatsApp identifies a template when it is sent.
--   status            lower case: approved, pending, rejected, paused, disabled, in_appeal,
--                     pending_deletion, deleted, archived, limit_exceeded, unknown (a value
--                     this version does not know)
--   category          marketing | utility | authentication | unknown
--   parameter_format  positional ({{1}}) | named ({{name}})
--   components        the template's components array as Graph gave it (compact JSON)
--   parameters        the parameters found in them, in order: a JSON array of
--                     {"component":"header"|"body"|"button","index":N (buttons),"name":"1"}
-- A refresh replaces the set: a template Graph no longer lists is deleted. Changes made by a
-- webhook are audit events (template_status, template_category); a refresh that changed
-- anything is one templates_refreshed event.
CREATE TABLE whatsapp_templates (
  id               INTEGER PRIMARY KEY,
  waba_id          TEXT NOT NULL,
  template_id      TEXT NOT NULL,
  name             TEXT NOT NULL,
  language         TEXT NOT NULL,
  status           TEXT NOT NULL,
  category         TEXT NOT NULL,
  parameter_format TEXT NOT NULL,
  components       TEXT NOT NULL,
  parameters       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  UNIQUE (name, language)
);
CREATE VIEW v_templates AS
  SELECT name, language, status, category, parameter_format, parameters, components, template_id, waba_id,
         updated_at
  FROM whatsapp_templates;
